package vault_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/plugin"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/internal/keyhook"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestRekey(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	write(t, v, "/memories/a", "before")
	old, _ := keys.ReadIdentity(opts.IdentityFile, nil)
	before, _ := v.Log(ctx, vault.LogOptions{Limit: 1})

	res, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retired != opts.IdentityFile+".old" || res.Files != 1 || len(res.Added) != 1 || len(res.Removed) != 1 ||
		res.Removed[0].Key != old.Recipients[0].Key || res.Identity.Recipients[0].Key != res.Added[0].Key {
		t.Errorf("Rekey = %+v", res)
	}
	for _, p := range []string{opts.IdentityFile, res.Retired} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", p, fi.Mode(), err)
		}
	}
	// The same Vault goes on with the new key, and so does a new process.
	write(t, v, "/memories/b", "after")
	for _, vv := range []*vault.Vault{v, openAs(t, v.Dir(), opts.IdentityFile)} {
		for p, want := range map[string]string{"/memories/a": "before", "/memories/b": "after"} {
			if got, err := read(t, vv, p); err != nil || got != want {
				t.Errorf("read %s after rekey = %q, %v", p, got, err)
			}
		}
	}
	// The retired key reads the history before the rotation, and nothing after.
	retired := openAs(t, v.Dir(), res.Retired)
	if got, err := readAt(t, retired, before[0].Commit, "/memories/a"); err != nil || got != "before" {
		t.Errorf("retired key reads the old history = %q, %v", got, err)
	}
	if _, err := read(t, retired, "/memories/b"); !errors.Is(err, vault.ErrDecrypt) {
		t.Errorf("retired key reads a new file: err = %v, want ErrDecrypt", err)
	}
	if log, _ := v.Log(ctx, vault.LogOptions{Limit: 2}); log[1].Command != "rekey" {
		t.Errorf("rekey commit = %+v", log[1])
	}
	// A second rotation keeps the first retired key as identity.old.1.
	if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Retired + ".1"); err != nil {
		t.Errorf("the first retired identity was not kept: %v", err)
	}
}

func TestRekeyInterruptedResumes(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	for _, p := range []string{"/memories/a", "/memories/b", "/memories/c", "/memories/d"} {
		write(t, v, p, "content of "+p)
	}
	vaulttest.FailReencryptionAfter(2)
	_, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{PostQuantum: true})
	vaulttest.FailReencryptionAfter(0)
	if !errors.Is(err, keyhook.ErrInjected) {
		t.Fatalf("Rekey err = %v, want the injected interruption", err)
	}
	pending, err := keys.ReadIdentity(opts.IdentityFile+".new", nil)
	if err != nil {
		t.Fatalf("the pending key is gone: %v", err)
	}
	res, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 2 || res.Identity.Recipients[0].Key != pending.Recipients[0].Key || !res.Identity.Recipients[0].PostQuantum {
		t.Errorf("resumed Rekey = %+v, want the pending post-quantum key and 2 files resumed", res)
	}
	if got, err := read(t, openAs(t, v.Dir(), opts.IdentityFile), "/memories/d"); err != nil || got != "content of /memories/d" {
		t.Errorf("read after the resumed rekey = %q, %v", got, err)
	}
}

func TestRekeyRefusesSSHIdentity(t *testing.T) {
	dir := t.TempDir()
	key, _ := vaulttest.SSHKey(t, dir, "id_ed25519", "ed25519", "")
	v, _, err := vault.Init(ctx, filepath.Join(dir, "v.git"), vault.Options{IdentityFile: key})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); !errors.Is(err, vault.ErrNoIdentity) {
		t.Errorf("Rekey with an SSH identity: err = %v, want ErrNoIdentity", err)
	}
	if _, err := os.Stat(key); err != nil {
		t.Errorf("the SSH key was moved: %v", err)
	}
}

// The test binary is also an age plugin, age-plugin-mvtest, when run under
// that name: its "encryption" puts the file key in the clear, which is enough
// to show that memvault drives plugins for recipients and identities.
func init() {
	if filepath.Base(os.Args[0]) != "age-plugin-mvtest" {
		return
	}
	p, err := plugin.New("mvtest")
	if err != nil {
		os.Exit(1)
	}
	p.HandleRecipient(func([]byte) (age.Recipient, error) { return clearKey{}, nil })
	p.HandleIdentity(func([]byte) (age.Identity, error) { return clearKey{}, nil })
	os.Exit(p.Main())
}

type clearKey struct{}

func (clearKey) Wrap(fileKey []byte) ([]*age.Stanza, error) {
	return []*age.Stanza{{Type: "mvtest", Body: fileKey}}, nil
}

func (clearKey) Unwrap(ss []*age.Stanza) ([]byte, error) {
	for _, s := range ss {
		if s.Type == "mvtest" {
			return s.Body, nil
		}
	}
	return nil, age.ErrIncorrectIdentity
}

func TestPluginRecipientAndIdentity(t *testing.T) {
	bin := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "age-plugin-mvtest")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	v := vaulttest.New(t)
	write(t, v, "/memories/a", "for the token")
	key := plugin.EncodeRecipient("mvtest", []byte("token 1"))
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{key}}); err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(t.TempDir(), "plugin-identity")
	text := "#    Recipient: " + key + "\n" + plugin.EncodeIdentity("mvtest", []byte("token 1")) + "\n"
	if err := os.WriteFile(id, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := keys.ReadIdentity(id, nil)
	if err != nil || info.Recipients[0].Key != key {
		t.Errorf("ReadIdentity(plugin identity) = %+v, %v; want its commented key", info, err)
	}
	if got, err := read(t, openAs(t, v.Dir(), id), "/memories/a"); err != nil || got != "for the token" {
		t.Errorf("read through the plugin = %q, %v", got, err)
	}
	s, _ := v.Snapshot(ctx)
	rs, _ := s.Recipients(ctx)
	if len(rs) != 2 || !strings.HasPrefix(rs[1].Type, "plugin:mvtest") {
		t.Errorf("Recipients = %+v, want the plugin key", rs)
	}
}

// After two rotations the identity alone reads the first commit, in the Vault
// that rotated and in a new one (the MCP server's and the UI's), blame
// included: the retired keys beside it are read with. Before, only
// --identity IDENTITY.old did, and blame failed as "cannot be decrypted".
func TestRetiredKeysReadHistory(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	write(t, v, "/memories/a", "first\n")
	first, _ := v.Log(ctx, vault.LogOptions{Limit: 1})
	for range 2 {
		if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := keys.RetiredIdentities(opts.IdentityFile); len(got) != 2 ||
		got[0] != opts.IdentityFile+".old" || got[1] != opts.IdentityFile+".old.1" {
		t.Errorf("RetiredIdentities = %q, want .old then .old.1", got)
	}
	for name, vv := range map[string]*vault.Vault{"same": v, "new": openAs(t, v.Dir(), opts.IdentityFile)} {
		if got, err := readAt(t, vv, first[0].Commit, "/memories/a"); err != nil || got != "first\n" {
			t.Errorf("%s vault: read the first commit = %q, %v", name, got, err)
		}
		if _, err := vv.Blame(ctx, "/memories/a", first[0].Commit); err != nil {
			t.Errorf("%s vault: Blame at the first commit: %v", name, err)
		}
	}
	// A key that is not one of them names each key it tried.
	other := filepath.Join(dir, "other")
	if _, err := keys.CreateIdentity(other, keys.IdentityOptions{}); err != nil {
		t.Fatal(err)
	}
	stranger := openAs(t, v.Dir(), other)
	_, err := readAt(t, stranger, first[0].Commit, "/memories/a")
	if !errors.Is(err, vault.ErrDecrypt) || !strings.Contains(err.Error(), "written for x25519 age1") {
		t.Errorf("a stranger's read: err = %v, want ErrDecrypt naming the keys the file was written for", err)
	}
}

// A rekey killed after its commit leaves the new key at IDENTITY.new, and
// perhaps the old one already moved to IDENTITY.old: every command, not only
// a rekey run again, reads the current files in either state.
func TestRekeyStoppedBeforeItsMoves(t *testing.T) {
	for _, moved := range []bool{false, true} {
		dir := t.TempDir()
		v, opts := vaulttest.NewAt(t, dir)
		write(t, v, "/memories/a", "before")
		res, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		write(t, v, "/memories/b", "after")
		id := opts.IdentityFile
		// Put the files back as the commit left them, before the moves.
		if err := os.Rename(id, id+".new"); err != nil {
			t.Fatal(err)
		}
		if !moved {
			if err := os.Rename(res.Retired, id); err != nil {
				t.Fatal(err)
			}
		}
		for p, want := range map[string]string{"/memories/a": "before", "/memories/b": "after"} {
			if got, err := read(t, openAs(t, v.Dir(), id), p); err != nil || got != want {
				t.Errorf("moved=%v: read %s = %q, %v", moved, p, got, err)
			}
		}
		if moved {
			// Finished on the first open: the new key is the identity again.
			if got, err := keys.ReadIdentity(id, nil); err != nil || got.Recipients[0].Key != res.Identity.Recipients[0].Key {
				t.Errorf("moved=%v: identity after open = %+v, %v; want the new key", moved, got, err)
			}
		}
		if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
			t.Errorf("moved=%v: a rekey after the stop: %v", moved, err)
		}
	}
}

// A rekey of a passphrase-protected identity keeps it protected, under the
// same passphrase, when no new one is given: it once wrote the new key in
// the clear without a word.
func TestRekeyKeepsProtection(t *testing.T) {
	vaulttest.FastScrypt()
	dir := t.TempDir()
	id := filepath.Join(dir, "identity")
	if _, err := keys.CreateIdentity(id, keys.IdentityOptions{Passphrase: []byte("correct horse")}); err != nil {
		t.Fatal(err)
	}
	pass := func(string) ([]byte, error) { return []byte("correct horse"), nil }
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: id, Passphrase: pass})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	write(t, v, "/memories/a", "kept")
	if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(id)
	if strings.Contains(string(raw), "AGE-SECRET-KEY") {
		t.Fatal("the rotated identity is written in the clear")
	}
	info, err := keys.ReadIdentity(id, pass)
	if err != nil || !info.Protected {
		t.Fatalf("the rotated identity = %+v, %v; want protected by the same passphrase", info, err)
	}
	w, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: id, Passphrase: pass})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, err := read(t, w, "/memories/a"); err != nil || got != "kept" {
		t.Errorf("read with the rotated key = %q, %v", got, err)
	}
}

// A rekey rotates the writer's signing key with the identity, in its own
// commit: whoever took a copy of the identity folder took the signing key
// too, and a rotation that kept it a writer let them go on writing memory.
// The rekey's commit is signed with the old key and lists the new one in its
// place; what follows is signed with the new one; the old key is kept beside
// the retired identity. A second handle on the vault, opened before the
// rekey (a long-running server), signs with the new key too.
func TestRekeyRotatesSigningKey(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	server := openAs(t, v.Dir(), opts.IdentityFile)
	write(t, v, "/memories/a", "before")
	old, err := v.SigningWriter()
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now, err := v.SigningWriter()
	if err != nil || now.Fingerprint == old.Fingerprint || res.Writer != now.Fingerprint {
		t.Fatalf("signing key after the rekey = %s, %v (said %s); want a new one (was %s)", now.Fingerprint, err, res.Writer, old.Fingerprint)
	}
	ws, _, err := v.Writers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, w := range ws {
		listed = append(listed, w.Fingerprint)
	}
	if !slices.Contains(listed, now.Fingerprint) || slices.Contains(listed, old.Fingerprint) {
		t.Errorf("writers after the rekey = %v; want the new key %s in place of %s", listed, now.Fingerprint, old.Fingerprint)
	}
	if _, err := os.Stat(keys.SigningKeyFile(res.Retired)); err != nil {
		t.Errorf("the old signing key is not kept beside the retired identity: %v", err)
	}
	write(t, v, "/memories/b", "after")
	write(t, server, "/memories/c", "from the server")
	log := vaulttest.Log(t, v, vault.LogOptions{})
	if log[0].Signer != now.Fingerprint || log[1].Signer != now.Fingerprint || log[2].Signer != old.Fingerprint || log[2].Command != "rekey" {
		t.Errorf("signers, newest first: %s %s, %s (%s); want the new key twice, then the old key's rekey",
			log[0].Signer, log[1].Signer, log[2].Signer, log[2].Command)
	}
}

// A rekey stopped after any number of the renames that move its key files
// (each made durable before the next, so power lost there is the same state
// as a stop one rename earlier): a new process opens the vault, writes and
// reads everything; a rekey run again finishes what nothing else does; then
// every key the vault ever had is still on disk, and the identity's signing
// key is the vault's writer.
func TestRekeyStoppedInItsMoves(t *testing.T) {
	for stop := 0; ; stop++ {
		dir := t.TempDir()
		v, opts := vaulttest.NewAt(t, dir)
		id := opts.IdentityFile
		write(t, v, "/memories/a", "before")
		if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
			t.Fatal(err) // a first rotation, so that the second moves an earlier retired key too
		}
		restore := vault.StopRekeyMovesAfter(stop)
		_, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{})
		restore()
		v.Close()
		if err == nil {
			if stop < 6 {
				t.Fatalf("a rekey stopped after %d renames succeeded; want 6 renames (three per key)", stop)
			}
			return
		}
		w := openAs(t, v.Dir(), id)
		write(t, w, "/memories/b", "after")
		for p, want := range map[string]string{"/memories/a": "before", "/memories/b": "after"} {
			if got, err := read(t, w, p); err != nil || got != want {
				t.Errorf("stopped after %d renames: read %s = %q, %v", stop, p, got, err)
			}
		}
		if _, err := os.Stat(id + ".new"); err == nil {
			if _, err := w.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
				t.Errorf("stopped after %d renames: the rekey run again: %v", stop, err)
			}
		}
		for _, f := range []string{id, id + ".old", id + ".old.1"} {
			for _, g := range []string{f, keys.SigningKeyFile(f)} {
				if _, err := os.Stat(g); err != nil {
					t.Errorf("stopped after %d renames: %s: %v", stop, filepath.Base(g), err)
				}
			}
		}
		me, err := w.SigningWriter()
		if err != nil {
			t.Fatal(err)
		}
		ws, _, _ := w.Writers(ctx)
		if !slices.ContainsFunc(ws, func(x keys.Writer) bool { return x.Fingerprint == me.Fingerprint }) || len(ws) != 1 {
			t.Errorf("stopped after %d renames: writers %v, want only the identity's signing key %s", stop, ws, me.Fingerprint)
		}
	}
}
