package vault_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// passphrase answers every prompt with pw and counts the prompts.
func passphrase(pw string, asked *atomic.Int32) func(string) ([]byte, error) {
	return func(string) ([]byte, error) {
		asked.Add(1)
		return []byte(pw), nil
	}
}

// A passphrase-protected identity is unlocked once for 1,000 reads.
func TestPassphraseUnlockedOncePerProcess(t *testing.T) {
	vaulttest.FastScrypt()
	dir := t.TempDir()
	id := filepath.Join(dir, "identity")
	if _, err := keys.CreateIdentity(id, keys.IdentityOptions{Passphrase: []byte("correct horse")}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(id)
	if !bytes.HasPrefix(raw, []byte("-----BEGIN AGE ENCRYPTED FILE-----")) || bytes.Contains(raw, []byte("AGE-SECRET-KEY")) {
		t.Fatalf("protected identity file is not an armored age file:\n%s", raw)
	}
	var asked atomic.Int32
	opts := vault.Options{IdentityFile: id, Passphrase: passphrase("correct horse", &asked)}
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	err = v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
		for i := range n {
			if err := tx.WriteFile(ctx, fmt.Sprintf("/memories/f%04d", i), []byte(fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return nil
	})
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	asked.Store(0)
	runs := vaulttest.ScryptRuns()
	v, err = vault.Open(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	s, _ := v.Snapshot(ctx)
	for i := range n {
		got, err := s.ReadFile(ctx, fmt.Sprintf("/memories/f%04d", i))
		if err != nil || string(got) != fmt.Sprint(i) {
			t.Fatalf("ReadFile(f%04d) = %q, %v", i, got, err)
		}
	}
	if got := vaulttest.ScryptRuns() - runs; got != 1 {
		t.Errorf("%d reads ran scrypt %d times, want once", n, got)
	}
	if got := asked.Load(); got != 1 {
		t.Errorf("%d reads asked for the passphrase %d times, want once", n, got)
	}
}

func newPass(pw string) func() ([]byte, error) {
	return func() ([]byte, error) { return []byte(pw), nil }
}

func TestWrongPassphrase(t *testing.T) {
	vaulttest.FastScrypt()
	dir := t.TempDir()
	id := filepath.Join(dir, "identity")
	if _, err := keys.CreateIdentity(id, keys.IdentityOptions{Passphrase: []byte("right")}); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	pw := "wrong"
	opts := vault.Options{IdentityFile: id, Passphrase: func(string) ([]byte, error) { asked.Add(1); return []byte(pw), nil }}
	if _, _, err := vault.Init(ctx, filepath.Join(dir, "v.git"), opts); !errors.Is(err, vault.ErrPassphrase) {
		t.Fatalf("Init with a wrong passphrase: err = %v, want ErrPassphrase", err)
	}
	pw = "right"
	v, _, err := vault.Init(ctx, filepath.Join(dir, "v.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	write(t, v, "/memories/a", "x")
	write(t, v, "/memories/b", "y")
	pw = "wrong"
	v2, _ := vault.Open(ctx, v.Dir(), opts)
	defer v2.Close()
	if _, err := read(t, v2, "/memories/a"); !errors.Is(err, vault.ErrPassphrase) || strings.Contains(err.Error(), "wrong\"") {
		t.Errorf("read with a wrong passphrase: err = %v, want ErrPassphrase", err)
	}
	before := asked.Load()
	if _, err := read(t, v2, "/memories/b"); !errors.Is(err, vault.ErrPassphrase) || asked.Load() != before {
		t.Errorf("a second read after a wrong passphrase: err = %v, asked %d more times; want the failure kept", err, asked.Load()-before)
	}
	pw = "right" // a UI that lets the user try again opens the vault again
	v3, _ := vault.Open(ctx, v.Dir(), opts)
	defer v3.Close()
	if got, err := read(t, v3, "/memories/a"); err != nil || got != "x" {
		t.Errorf("read after a retry = %q, %v", got, err)
	}
	noPrompt, _ := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: id})
	defer noPrompt.Close()
	if _, err := read(t, noPrompt, "/memories/a"); !errors.Is(err, vault.ErrPassphrase) {
		t.Errorf("read with no way to ask: err = %v, want ErrPassphrase", err)
	}
}

func TestSetPassphrase(t *testing.T) {
	vaulttest.FastScrypt()
	id, recipient := newIdentity(t, keys.IdentityOptions{})
	check := func(pass func(string) ([]byte, error), protected bool) {
		t.Helper()
		info, err := keys.ReadIdentity(id, pass)
		if err != nil || info.Protected != protected || info.Recipients[0].Key != recipient {
			t.Errorf("ReadIdentity = %+v, %v; want protected %v, key %s", info, err, protected, recipient)
		}
		if fi, err := os.Stat(id); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("identity mode = %v, %v; want 0600", fi.Mode(), err)
		}
	}
	var asked atomic.Int32
	if err := keys.SetPassphrase(id, nil, newPass("one")); err != nil {
		t.Fatal(err)
	}
	check(passphrase("one", &asked), true)
	if err := keys.SetPassphrase(id, passphrase("bad", &asked), newPass("two")); !errors.Is(err, vault.ErrPassphrase) {
		t.Errorf("SetPassphrase with a wrong old passphrase: err = %v, want ErrPassphrase", err)
	}
	if err := keys.SetPassphrase(id, passphrase("one", &asked), newPass("two")); err != nil {
		t.Fatal(err)
	}
	check(passphrase("two", &asked), true)
	if err := keys.SetPassphrase(id, passphrase("two", &asked), newPass("")); err != nil {
		t.Fatal(err)
	}
	check(nil, false)
	if _, err := keys.CreateIdentity(id, keys.IdentityOptions{}); !errors.Is(err, vault.ErrExist) {
		t.Errorf("CreateIdentity over an existing file: err = %v, want ErrExist", err)
	}
}

// SSH keys as recipient and as identity, plain and encrypted.
func TestSSHKeys(t *testing.T) {
	dir := t.TempDir()
	edPath, edPub := vaulttest.SSHKey(t, dir, "id_ed25519", "ed25519", "")
	rsaPath, rsaPub := vaulttest.SSHKey(t, dir, "id_rsa", "rsa", "s3cret")
	// A vault made with an SSH key as its identity is encrypted to that key.
	v, res, err := vault.Init(ctx, filepath.Join(dir, "v.git"), vault.Options{IdentityFile: edPath})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if res.IdentityCreated || !strings.HasPrefix(edPub, res.Recipient) {
		t.Errorf("Init with an SSH identity = %+v, want its key %s", res, edPub)
	}
	write(t, v, "/memories/a", "shared over ssh")
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{rsaPub}}); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	rsaV, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: rsaPath, Passphrase: passphrase("s3cret", &asked)})
	if err != nil {
		t.Fatal(err)
	}
	defer rsaV.Close()
	write(t, v, "/memories/b", "second")
	for _, p := range []string{"/memories/a", "/memories/b"} {
		if _, err := read(t, rsaV, p); err != nil {
			t.Errorf("read %s with the encrypted RSA key: %v", p, err)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("the encrypted SSH key asked for its passphrase %d times, want once", asked.Load())
	}
	info, err := keys.ReadIdentity(rsaPath, nil)
	if err != nil || !info.Protected || !strings.HasPrefix(rsaPub, info.Recipients[0].Key) {
		t.Errorf("ReadIdentity(encrypted SSH key) = %+v, %v; want its public key without a passphrase", info, err)
	}
	if err := keys.SetPassphrase(rsaPath, nil, newPass("x")); !errors.Is(err, vault.ErrNoIdentity) || !strings.Contains(err.Error(), "ssh-keygen -p") {
		t.Errorf("SetPassphrase(SSH key) err = %v, want a pointer to ssh-keygen -p", err)
	}
}

// A post-quantum vault.
func TestPostQuantumVault(t *testing.T) {
	dir := t.TempDir()
	id, pq := newIdentity(t, keys.IdentityOptions{PostQuantum: true})
	v, res, err := vault.Init(ctx, filepath.Join(dir, "v.git"), vault.Options{IdentityFile: id})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if res.Recipient != pq || !strings.HasPrefix(pq, "age1pq1") {
		t.Fatalf("Init recipient = %.20s…, want the identity's age1pq1 key", res.Recipient)
	}
	write(t, v, "/memories/a", "quantum-safe")
	_, other := newIdentity(t, keys.IdentityOptions{PostQuantum: true})
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{other}}); err != nil {
		t.Fatal(err)
	}
	if got, err := read(t, v, "/memories/a"); err != nil || got != "quantum-safe" {
		t.Errorf("read = %q, %v", got, err)
	}
	_, classical := newIdentity(t, keys.IdentityOptions{})
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{classical}}); !errors.Is(err, vault.ErrRecipients) {
		t.Errorf("adding an X25519 key to a post-quantum vault: err = %v, want ErrRecipients", err)
	}
}
