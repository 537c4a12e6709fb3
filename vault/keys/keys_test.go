package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/vault/internal/keyhook"
)

func init() { keyhook.WorkFactor.Store(10) } // scrypt's work factor, low for the tests

func passphrase(p string) func(string) ([]byte, error) {
	return func(string) ([]byte, error) { return []byte(p), nil }
}

// TestIdentityFiles: an identity made in each kind reads back as the same
// keys, with mode 0600 in a 0700 folder; a protected one needs its
// passphrase, and a wrong one is ErrPassphrase; an existing file is never
// replaced; what is not an identity is ErrNoIdentity, and no error shows key
// material.
func TestIdentityFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		opts IdentityOptions
		pq   bool
	}{
		{"x25519", IdentityOptions{}, false},
		{"post-quantum", IdentityOptions{PostQuantum: true}, true},
		{"protected", IdentityOptions{Passphrase: []byte("correct horse")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name, "identity")
			made, err := CreateIdentity(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(made.Recipients) != 1 || made.Recipients[0].PostQuantum != tc.pq {
				t.Fatalf("CreateIdentity = %+v", made)
			}
			for p, want := range map[string]fs.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
					t.Errorf("%s has mode %v, %v; want %v", p, fi.Mode().Perm(), err, want)
				}
			}
			pass := passphrase(string(tc.opts.Passphrase))
			got, err := ReadIdentity(path, pass)
			if err != nil || got.Recipients[0].Key != made.Recipients[0].Key || got.Protected != (len(tc.opts.Passphrase) > 0) {
				t.Fatalf("ReadIdentity = %+v, %v; want %+v", got, err, made)
			}
			if len(tc.opts.Passphrase) > 0 {
				if _, err := ReadIdentity(path, passphrase("wrong")); !errors.Is(err, ErrPassphrase) {
					t.Errorf("ReadIdentity with a wrong passphrase = %v, want ErrPassphrase", err)
				}
				if _, err := ReadIdentity(path, nil); !errors.Is(err, ErrPassphrase) {
					t.Errorf("ReadIdentity with no way to ask = %v, want ErrPassphrase", err)
				}
			}
			if _, err := CreateIdentity(path, tc.opts); !errors.Is(err, fs.ErrExist) {
				t.Errorf("CreateIdentity over an existing file = %v, want fs.ErrExist", err)
			}
			data, _ := os.ReadFile(path)
			if _, err := ReadIdentity(path, pass); err != nil {
				t.Errorf("the identity changed after a refused CreateIdentity: %v", err)
			} else if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
				t.Error("CreateIdentity replaced an existing file")
			}
		})
	}
	for name, content := range map[string]string{
		"empty":        "",
		"a recipient":  "age1tclsevtqn2gpffcr2xld9wuk2vtzt0qg5a0tae06n2dz2n9j2pssngf5zd\n",
		"garbage":      "AGE-SECRET-KEY-1NOTAKEY\n",
		"a public ssh": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsKLqeplhpuf0sl7Yz2T1AlPxKGJ4ejnN4XAnixg4bs bob\n",
	} {
		path := filepath.Join(dir, "bad-"+strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadIdentity(path, nil)
		if !errors.Is(err, ErrNoIdentity) {
			t.Errorf("ReadIdentity(%s) = %v, want ErrNoIdentity", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "NOTAKEY") {
			t.Errorf("ReadIdentity(%s)'s error %q shows the file", name, err)
		}
	}
	if _, err := ReadIdentity(filepath.Join(dir, "missing"), nil); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("ReadIdentity of a missing file = %v, want ErrNoIdentity", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "a-folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadIdentity(filepath.Join(dir, "a-folder"), nil); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("ReadIdentity of a folder = %v, want ErrNoIdentity", err)
	}
}

// TestSetPassphrase: protecting an identity keeps its keys and then needs the
// passphrase; removing the passphrase (an empty one) reads without.
func TestSetPassphrase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "identity")
	made, err := CreateIdentity(path, IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := SetPassphrase(path, nil, func() ([]byte, error) { return []byte("s3cret"), nil }); err != nil {
		t.Fatalf("SetPassphrase: %v", err)
	}
	if _, err := ReadIdentity(path, nil); !errors.Is(err, ErrPassphrase) {
		t.Errorf("a protected identity read with no passphrase: %v", err)
	}
	got, err := ReadIdentity(path, passphrase("s3cret"))
	if err != nil || got.Recipients[0].Key != made.Recipients[0].Key || !got.Protected {
		t.Errorf("after SetPassphrase, ReadIdentity = %+v, %v", got, err)
	}
	if err := SetPassphrase(path, passphrase("s3cret"), func() ([]byte, error) { return nil, nil }); err != nil {
		t.Fatalf("SetPassphrase to none: %v", err)
	}
	if got, err := ReadIdentity(path, nil); err != nil || got.Protected {
		t.Errorf("after removing the passphrase, ReadIdentity = %+v, %v", got, err)
	}
}

// TestSigningKey: an age identity's signing key is made beside it on first
// use, mode 0600, and loads as the same key after; a protected identity's is
// under the same passphrase; an SSH identity signs with itself; a damaged
// signing key is ErrNoIdentity.
func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "identity")
	if _, err := CreateIdentity(path, IdentityOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := LoadSigner(path, Passphrases{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(SigningKeyFile(path)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the signing key file: %v, %v; want mode 0600", fi, err)
	}
	again, err := LoadSigner(path, Passphrases{})
	if err != nil || !bytes.Equal(again.PublicKey().Marshal(), first.PublicKey().Marshal()) {
		t.Errorf("LoadSigner a second time gave another key (%v)", err)
	}

	protected := filepath.Join(dir, "protected")
	if _, err := CreateIdentity(protected, IdentityOptions{Passphrase: []byte("pw")}); err != nil {
		t.Fatal(err)
	}
	ask := func(string) ([]byte, error) { return []byte("pw"), nil }
	if _, err := LoadSigner(protected, Passphrases{Ask: ask}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(SigningKeyFile(protected))
	if _, err := ssh.ParsePrivateKey(data); err == nil {
		t.Error("a protected identity's signing key is stored without a passphrase")
	}
	if _, err := LoadSigner(protected, Passphrases{Ask: func(string) ([]byte, error) { return []byte("no"), nil }}); !errors.Is(err, ErrPassphrase) {
		t.Errorf("LoadSigner with a wrong passphrase = %v, want ErrPassphrase", err)
	}

	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sshID := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(sshID, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSigner(sshID, Passphrases{})
	if err != nil || !bytes.Equal(s.PublicKey().Marshal(), mustSSHPub(t, priv).Marshal()) {
		t.Errorf("an SSH identity does not sign with itself: %v", err)
	}
	if _, err := os.Stat(SigningKeyFile(sshID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an SSH identity got a signing key beside it: %v", err)
	}

	if err := os.WriteFile(SigningKeyFile(path), []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSigner(path, Passphrases{}); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("LoadSigner with a damaged signing key = %v, want ErrNoIdentity", err)
	}
}

func mustSSHPub(t *testing.T, priv ed25519.PrivateKey) ssh.PublicKey {
	t.Helper()
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestRecipients: each kind of recipient parses to its canonical key and
// type; a secret key or anything else is refused without being shown; a file
// of mixed post-quantum and classical keys, or of none, does not check.
func TestRecipients(t *testing.T) {
	x, err := CreateIdentity(filepath.Join(t.TempDir(), "x"), IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pq, err := CreateIdentity(filepath.Join(t.TempDir(), "pq"), IdentityOptions{PostQuantum: true})
	if err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	sshKey := WriterOf(mustSSHPub(t, priv), "").Key + " bob@laptop"
	for in, want := range map[string]string{
		x.Recipients[0].Key:  TypeX25519,
		pq.Recipients[0].Key: TypeHybrid,
		sshKey:               "ssh-ed25519",
	} {
		r, err := ParseRecipient("  " + in + "  ")
		if err != nil || r.Type != want {
			t.Errorf("ParseRecipient(%.30s…) = %+v, %v; want type %s", in, r, err, want)
		}
	}
	for _, bad := range []string{"", "age1notakey", "AGE-SECRET-KEY-1QQQQQQ", "-----BEGIN OPENSSH PRIVATE KEY-----", "ssh-ed25519 AAAA", "hello"} {
		_, err := ParseRecipient(bad)
		if !errors.Is(err, ErrRecipients) {
			t.Errorf("ParseRecipient(%q) = %v, want ErrRecipients", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "QQQQQQ") {
			t.Errorf("ParseRecipient's error %q shows a secret key", err)
		}
	}
	mixed, err := ParseRecipientsFile([]byte(x.Recipients[0].Key + "\n" + pq.Recipients[0].Key + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mixed.Check(); !errors.Is(err, ErrMixedRecipients) {
		t.Errorf("a file of mixed keys checks: %v", err)
	}
	none, err := ParseRecipientsFile([]byte("# nobody\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Check(); !errors.Is(err, ErrRecipients) {
		t.Errorf("a file of no key checks: %v", err)
	}
	// A member's name above the first key, after the header's blank line,
	// is that key's.
	named, err := ParseRecipientsFile([]byte("# memvault: header\n\n# alice\n" + x.Recipients[0].Key + "\n# bob\n" + pq.Recipients[0].Key + "\n"))
	if err != nil || named.Entries[0].Comment != "alice" || named.Entries[1].Comment != "bob" {
		t.Errorf("names beside keys: %+v, %v", named, err)
	}
}

// TestWriters: a writers file reads back as written, comments and blank lines
// aside; a line that is no public SSH key, or carries options, is ErrWriter.
func TestWriters(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	w := WriterOf(mustSSHPub(t, priv), "alice")
	_, priv2, _ := ed25519.GenerateKey(rand.Reader)
	w2 := WriterOf(mustSSHPub(t, priv2), "")
	ws, err := ParseWriters(FormatWriters([]Writer{w, w2}))
	if err != nil || len(ws) != 2 || ws[0].Fingerprint != w.Fingerprint || ws[0].Comment != "alice" || ws[1].Comment != "" {
		t.Fatalf("ParseWriters(FormatWriters) = %+v, %v", ws, err)
	}
	if got, ok := FindWriter(ws, w2.Public); !ok || got.Key != w2.Key {
		t.Errorf("FindWriter = %+v, %v", got, ok)
	}
	removed, err := ParseWriters(FormatRemoved([]Writer{w2}))
	if err != nil || len(removed) != 1 || removed[0].Key != w2.Key {
		t.Errorf("the removed writers file reads back as %+v, %v", removed, err)
	}
	for _, bad := range []string{
		"not a key",
		`command="rm -rf /" ` + w.Key,
		w.Key + "\n" + "ssh-ed25519 AAAA broken",
	} {
		if _, err := ParseWriters([]byte(bad)); !errors.Is(err, ErrWriter) {
			t.Errorf("ParseWriters(%q) = %v, want ErrWriter", bad, err)
		}
	}
	if fp := SignerFingerprint("not armored"); fp != "unreadable signature" {
		t.Errorf("SignerFingerprint of garbage = %q", fp)
	}
	if fp := SignerFingerprint(""); fp != "" {
		t.Errorf("SignerFingerprint of nothing = %q", fp)
	}
}

func FuzzParseWriters(f *testing.F) {
	f.Add([]byte("# memvault\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsKLqeplhpuf0sl7Yz2T1AlPxKGJ4ejnN4XAnixg4bs alice\n"))
	f.Add([]byte("ssh-rsa AAAA\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		ws, err := ParseWriters(content)
		if err != nil {
			return
		}
		again, err := ParseWriters(FormatWriters(ws))
		if err != nil || len(again) != len(ws) {
			t.Fatalf("a writers file written again does not read back: %v", err)
		}
		for i := range ws {
			if again[i].Fingerprint != ws[i].Fingerprint {
				t.Fatalf("writer %d changed: %s -> %s", i, ws[i].Fingerprint, again[i].Fingerprint)
			}
		}
	})
}

func FuzzReadIdentity(f *testing.F) {
	f.Add([]byte("AGE-SECRET-KEY-1QQQQQQ\n"))
	f.Add([]byte("-----BEGIN AGE ENCRYPTED FILE-----\n"))
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"))
	f.Add([]byte("# created\nAGE-PLUGIN-YUBIKEY-1QQQ\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(dir, "identity")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadIdentity(path, nil) // must not panic, nor hang on a passphrase
		if err != nil && bytes.Contains(content, []byte("AGE-SECRET-KEY-1")) && strings.Contains(err.Error(), "AGE-SECRET-KEY-1") {
			t.Fatalf("ReadIdentity's error shows key material: %v", err)
		}
	})
}
