package keys

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/memvault/memvault/vault/internal/durable"
	"github.com/memvault/memvault/vault/internal/keyhook"
)

// IdentityOptions say what CreateIdentity makes.
type IdentityOptions struct {
	// PostQuantum makes a hybrid ML-KEM-768 + X25519 key (age1pq1…) instead of
	// an X25519 one. A vault's recipients must be all post-quantum or none.
	PostQuantum bool
	// Passphrase, when not empty, protects the file: it is then an armored age
	// file encrypted with the passphrase (scrypt), as `age -p -a` writes.
	Passphrase []byte
}

// ReadIdentity reads the identity file at path and describes it. A
// passphrase-protected age identity file must be unlocked to learn its public
// keys: pass is asked for the passphrase then (it may be nil otherwise). An
// encrypted SSH key is not unlocked. The error wraps ErrNoIdentity, or
// ErrPassphrase when the file cannot be unlocked.
func ReadIdentity(path string, pass func(prompt string) ([]byte, error)) (IdentityInfo, error) {
	id, err := ReadFile(path, pass, false)
	if err != nil {
		return IdentityInfo{}, err
	}
	return id.IdentityInfo, nil
}

// CreateIdentity generates a new secret key and writes it to path, mode 0600,
// creating its directory with mode 0700. It never replaces a file: the error
// wraps ErrExist if path exists.
func CreateIdentity(path string, opts IdentityOptions) (IdentityInfo, error) {
	id, err := CreateFile(path, opts)
	if err != nil {
		return IdentityInfo{}, err
	}
	return id.IdentityInfo, nil
}

func CreateFile(path string, opts IdentityOptions) (*File, error) {
	text, _, err := newIdentityText(opts.PostQuantum)
	if err != nil {
		return nil, err
	}
	defer clear(text)
	id, err := parseAgeIdentities(path, text, nil)
	if err != nil {
		return nil, err
	}
	content := text
	if len(opts.Passphrase) > 0 {
		if content, err = protectIdentity(text, opts.Passphrase); err != nil {
			return nil, err
		}
		id.Protected = true
	}
	if err := writeKeyFile(path, content, false); err != nil {
		return nil, err
	}
	return id, nil
}

// newIdentityText generates a key and renders it as an age identity file.
func newIdentityText(pq bool) ([]byte, Recipient, error) {
	var secret fmt.Stringer
	var r Recipient
	if pq {
		k, err := age.GenerateHybridIdentity()
		if err != nil {
			return nil, r, fmt.Errorf("vault: generate identity: %w", err)
		}
		secret, r = k, Recipient{Key: k.Recipient().String(), Type: TypeHybrid, PostQuantum: true}
	} else {
		k, err := age.GenerateX25519Identity()
		if err != nil {
			return nil, r, fmt.Errorf("vault: generate identity: %w", err)
		}
		secret, r = k, Recipient{Key: k.Recipient().String(), Type: TypeX25519}
	}
	text := fmt.Sprintf("# created: %s\n# public key: %s\n%s\n",
		time.Now().UTC().Format(time.RFC3339), r.Key, secret)
	return []byte(text), r, nil
}

// protectIdentity encrypts an identity file's text with a passphrase, armored.
func protectIdentity(text, passphrase []byte) ([]byte, error) {
	sr, err := age.NewScryptRecipient(string(passphrase))
	if err != nil {
		return nil, fmt.Errorf("vault: protect identity: %v: %w", err, ErrPassphrase)
	}
	if n := keyhook.WorkFactor.Load(); n > 0 {
		sr.SetWorkFactor(int(n))
	}
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, sr)
	if err == nil {
		_, err = w.Write(text)
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = aw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("vault: protect identity: %w", err)
	}
	return buf.Bytes(), nil
}

// SetPassphrase protects the age identity file at path with the passphrase
// newPass returns, or removes its protection when that is empty. If the file
// is protected now, pass is first asked for the current passphrase; newPass is
// called only once the file is unlocked. The file is replaced atomically and
// stays mode 0600. SSH keys are refused (ssh-keygen -p changes theirs). The
// error wraps ErrNoIdentity or ErrPassphrase, or is newPass's.
func SetPassphrase(path string, pass func(prompt string) ([]byte, error), newPass func() ([]byte, error)) error {
	data, err := readKeyFile(path)
	if err != nil {
		return err
	}
	defer clear(data)
	trimmed := bytes.TrimSpace(data)
	plain := data
	switch {
	case bytes.HasPrefix(trimmed, []byte(armor.Header)), bytes.HasPrefix(data, []byte("age-encryption.org/")):
		if plain, err = unlockAgeFile(path, data, pass); err != nil {
			return err
		}
		defer clear(plain)
	case bytes.HasPrefix(trimmed, []byte("-----BEGIN")):
		return fmt.Errorf("vault: identity %s is an SSH key: change its passphrase with ssh-keygen -p -f %s: %w", path, path, ErrNoIdentity)
	}
	if _, err := parseAgeIdentities(path, plain, nil); err != nil {
		return err
	}
	pw, err := newPass()
	if err != nil {
		return err
	}
	defer clear(pw)
	content := plain
	if len(pw) > 0 {
		if content, err = protectIdentity(plain, pw); err != nil {
			return err
		}
	}
	return writeKeyFile(path, content, true)
}

// LoadOrCreate returns the public key of the identity at path,
// generating an X25519 identity there if the file does not exist.
func LoadOrCreate(path string, pass func(string) ([]byte, error)) (recipient string, created bool, err error) {
	id, err := ReadFile(path, pass, false)
	if err != nil {
		if _, serr := os.Stat(path); errors.Is(serr, os.ErrNotExist) {
			return createFirstIdentity(path)
		}
		// Another process may have made it since the read (it appears
		// whole, by link): read it again before saying it is missing.
		if id, err = ReadFile(path, pass, false); err != nil {
			return "", false, err
		}
	}
	for _, r := range id.Recipients {
		if r.Key != "" {
			return r.Key, false, nil
		}
	}
	return "", false, fmt.Errorf("vault: identity %s does not say its public key: %w", path, ErrNoIdentity)
}

// createFirstIdentity creates the identity at path; ErrExist if another process
// made one first.
func createFirstIdentity(path string) (recipient string, created bool, err error) {
	info, err := CreateIdentity(path, IdentityOptions{})
	if err != nil {
		return "", false, err
	}
	return info.Recipients[0].Key, true, nil
}

// writeKeyFile writes key material to path with mode 0600, durably, creating
// the directory (0700). Without replace it never overwrites (ErrExist); with
// replace it swaps the file in atomically by rename.
func writeKeyFile(path string, content []byte, replace bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("vault: write identity %s: %w", path, errors.Unwrap(err))
	}
	err := durable.WriteFile(path, content, 0o600, replace)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("vault: write identity %s: a file is already there (move it away first: it may be the only key to a vault): %w", path, fs.ErrExist)
	}
	if err != nil {
		return fmt.Errorf("vault: write identity %s: %w", path, err)
	}
	return nil
}
