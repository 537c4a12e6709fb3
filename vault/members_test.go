package vault_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// newMember makes a member's identity and signing key and returns its member
// line's member and the identity's path.
func newMember(t *testing.T, name string) (keys.Member, string) {
	t.Helper()
	path, recipient := newIdentity(t, keys.IdentityOptions{})
	signer, err := keys.LoadSigner(path, keys.Passphrases{})
	if err != nil {
		t.Fatal(err)
	}
	w := keys.WriterOf(signer.PublicKey(), "")
	m, err := keys.ParseMember(keys.Member{Name: name, Reader: keys.Recipient{Key: recipient}, Writer: &w}.Line())
	if err != nil {
		t.Fatal(err)
	}
	return m, path
}

// TestMembersAddAndRemove: adding a member is one commit that makes it a
// reader and a writer, named; listing names each member and what it can do;
// removing it is one commit that takes both away, lists its signing key among
// the removed writers and, in the sealed format, rotates the vault key.
func TestMembersAddAndRemove(t *testing.T) {
	for _, plain := range []bool{true, false} {
		name := map[bool]string{true: "plain", false: "sealed"}[plain]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: plain, Name: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			write(t, v, "/memories/a.md", "alice's\n")
			before := len(vaulttest.Log(t, v, vault.LogOptions{}))
			bob, _ := newMember(t, "bob")
			if _, err := v.AddMember(ctx, vault.Meta{}, bob, false, nil); err != nil {
				t.Fatalf("AddMember(bob): %v", err)
			}
			recs := vaulttest.Log(t, v, vault.LogOptions{})
			if len(recs) != before+1 || recs[0].Command != "members-add" {
				t.Errorf("AddMember made %d commits (the last %q), want one members-add", len(recs)-before, recs[0].Command)
			}
			carol, _ := newMember(t, "carol")
			if _, err := v.AddMember(ctx, vault.Meta{}, carol, true, nil); err != nil {
				t.Fatalf("AddMember(carol, read-only): %v", err)
			}
			ms, err := v.Members(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.Name+map[bool]string{true: " reads", false: ""}[len(m.Readers) > 0]+map[bool]string{true: " writes", false: ""}[len(m.Writers) > 0])
				if m.Since.IsZero() {
					t.Errorf("member %q has no Since", m.Name)
				}
			}
			if strings.Join(got, ", ") != "alice reads writes, bob reads writes, carol reads" {
				t.Errorf("Members = %v", got)
			}
			if _, err := v.AddMember(ctx, vault.Meta{}, keys.Member{Name: "bob", Reader: carol.Reader}, false, nil); !errors.Is(err, vault.ErrExist) {
				t.Errorf("AddMember of another key under bob's name = %v, want ErrExist", err)
			}

			if _, err := v.RemoveMember(ctx, vault.Meta{}, "bob", nil); err != nil {
				t.Fatalf("RemoveMember(bob): %v", err)
			}
			ms, _ = v.Members(ctx)
			for _, m := range ms {
				if m.Name == "bob" {
					t.Errorf("bob is still a member: %+v", m)
				}
			}
			if err := v.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(gittest.Git(t), "--git-dir", v.Dir(), "show", "main:.memvault/removed").CombinedOutput()
			if err != nil || !strings.Contains(string(out), bob.Writer.Key) {
				t.Errorf(".memvault/removed = %s, %v; want bob's signing key", out, err)
			}
			if _, err := v.RemoveMember(ctx, vault.Meta{}, "dave", nil); !errors.Is(err, vault.ErrNotExist) {
				t.Errorf("RemoveMember(dave) = %v, want ErrNotExist", err)
			}
			if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
				t.Errorf("Fsck = %q, %v", problems, err)
			}
		})
	}
}

// TestRemoveReaderFromEmptyVault: a sealed vault with no memory file yet
// removes a reader (the key rotates); "memories: no such entry" stopped it,
// and the removed key read everything written next.
func TestRemoveReaderFromEmptyVault(t *testing.T) {
	v, _ := vaulttest.NewAt(t, t.TempDir())
	eve, eveKey := newIdentity(t, keys.IdentityOptions{})
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{eveKey}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{eveKey}}); err != nil {
		t.Fatalf("remove a reader of an empty sealed vault: %v", err)
	}
	write(t, v, "/memories/after.md", "written after eve left\n")
	ev, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: eve})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	snap, err := ev.Snapshot(ctx)
	if err == nil {
		_, err = snap.ReadFile(ctx, "/memories/after.md")
	}
	if err == nil {
		t.Error("eve, removed, reads what was written after")
	}
}
