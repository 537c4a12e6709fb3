package vault_test

import (
	"errors"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/plugin"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

func newX25519(t *testing.T) *age.X25519Identity {
	t.Helper()
	k, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newHybrid(t *testing.T) *age.HybridIdentity {
	t.Helper()
	k, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseRecipient(t *testing.T) {
	x := newX25519(t)
	pq := newHybrid(t)
	_, sshPub := vaulttest.SSHKey(t, t.TempDir(), "id_ed25519", "ed25519", "")
	sshKey, _, _ := strings.Cut(sshPub, " id_ed25519")
	pluginKey := plugin.EncodeRecipient("yubikey", []byte("some key bytes"))
	cases := []struct {
		in   string
		want keys.Recipient
	}{
		{x.Recipient().String(), keys.Recipient{Key: x.Recipient().String(), Type: keys.TypeX25519}},
		{"  " + x.Recipient().String() + "\n", keys.Recipient{Key: x.Recipient().String(), Type: keys.TypeX25519}},
		{pq.Recipient().String(), keys.Recipient{Key: pq.Recipient().String(), Type: keys.TypeHybrid, PostQuantum: true}},
		{sshPub, keys.Recipient{Key: sshKey, Type: keys.TypeSSHEd25519, Comment: "id_ed25519"}},
		{pluginKey, keys.Recipient{Key: pluginKey, Type: "plugin:yubikey"}},
	}
	for _, c := range cases {
		got, err := keys.ParseRecipient(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRecipient(%.30q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"", "hello", "age1notbech32", "ssh-ed25519 AAAAnotbase64", "ssh-dss AAAAB3NzaC1kc3M=",
		"-----BEGIN OPENSSH PRIVATE KEY-----",
	} {
		if _, err := keys.ParseRecipient(bad); !errors.Is(err, vault.ErrRecipients) {
			t.Errorf("ParseRecipient(%.30q) err = %v, want ErrRecipients", bad, err)
		}
	}
	for _, secret := range []string{x.String(), pq.String(), strings.ToLower(x.String())} {
		_, err := keys.ParseRecipient(secret)
		if !errors.Is(err, vault.ErrRecipients) || strings.Contains(err.Error(), secret[15:40]) {
			t.Errorf("ParseRecipient(a secret key) err = %v, want ErrRecipients not quoting it", err)
		}
	}
}

func TestRecipientsListAndMixRefused(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/a", "alpha")
	s, _ := v.Snapshot(ctx)
	rs, err := s.Recipients(ctx)
	if err != nil || len(rs) != 1 || rs[0].Type != keys.TypeX25519 {
		t.Fatalf("Recipients = %+v, %v; want the one X25519 key", rs, err)
	}
	pq := newHybrid(t).Recipient().String()
	_, err = v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{pq}})
	if !errors.Is(err, vault.ErrRecipients) || !strings.Contains(err.Error(), "post-quantum") || !strings.Contains(err.Error(), "cannot be mixed") {
		t.Errorf("adding a post-quantum key to an X25519 vault: err = %v, want ErrRecipients explaining the mix", err)
	}
	// Nothing was committed.
	if log, _ := v.Log(ctx, vault.LogOptions{}); len(log) != 2 {
		t.Errorf("after a refused change the log has %d commits, want 2", len(log))
	}
	_, err = v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{newX25519(t).Recipient().String()}})
	if !errors.Is(err, vault.ErrRecipients) || !strings.Contains(err.Error(), "not a recipient") {
		t.Errorf("removing a key that is not a recipient: err = %v, want ErrRecipients", err)
	}
	_, err = v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{rs[0].Key}})
	if !errors.Is(err, vault.ErrRecipients) {
		t.Errorf("removing the only key: err = %v, want ErrRecipients", err)
	}
}

func TestMissingPluginRefused(t *testing.T) {
	v := vaulttest.New(t)
	t.Setenv("PATH", t.TempDir())
	key := plugin.EncodeRecipient("nosuchplugin", []byte("k"))
	_, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{key}})
	if !errors.Is(err, vault.ErrRecipients) || !strings.Contains(err.Error(), "age-plugin-nosuchplugin") || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("adding a plugin key without its plugin: err = %v, want ErrRecipients naming age-plugin-nosuchplugin", err)
	}
}
