package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"filippo.io/age"
)

// keyring loads the identity once, on first use, and keeps the parsed recipients
// of the vault by the hash of its recipients file.
type keyring struct {
	path string

	once sync.Once
	ids  []age.Identity
	err  error

	mu         sync.Mutex
	recipients map[string][]age.Recipient // recipients file content -> parsed
}

func newKeyring(path string) *keyring {
	return &keyring{path: path, recipients: map[string][]age.Recipient{}}
}

func (k *keyring) identities() ([]age.Identity, error) {
	k.once.Do(func() {
		k.ids, k.err = readIdentities(k.path)
	})
	return k.ids, k.err
}

func readIdentities(path string) ([]age.Identity, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("vault: identity %s does not exist (run memvault init, or pass --identity): %w", path, ErrNoIdentity)
		}
		return nil, fmt.Errorf("vault: identity %s cannot be opened (%v): %w", path, errors.Unwrap(err), ErrNoIdentity)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(f)
	if err != nil {
		// age's parse errors do not quote key material, but say only where to look.
		return nil, fmt.Errorf("vault: identity %s is not an age identity file: %w", path, ErrNoIdentity)
	}
	return ids, nil
}

// loadOrCreateIdentity returns the public recipient of the identity at path,
// generating an X25519 identity there (mode 0600, in a 0700 directory) if the file
// does not exist.
func loadOrCreateIdentity(path string) (recipient string, created bool, err error) {
	ids, err := readIdentities(path)
	if err == nil {
		for _, id := range ids {
			switch id := id.(type) {
			case *age.X25519Identity:
				return id.Recipient().String(), false, nil
			case *age.HybridIdentity:
				return id.Recipient().String(), false, nil
			}
		}
		return "", false, fmt.Errorf("vault: identity %s holds no X25519 or hybrid key: %w", path, ErrNoIdentity)
	}
	if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		return "", false, err
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", false, fmt.Errorf("vault: generate identity: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("vault: create identity: %w", err)
	}
	content := fmt.Sprintf("# created: %s\n# public key: %s\n%s\n",
		time.Now().UTC().Format(time.RFC3339), id.Recipient(), id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("vault: create identity %s: %w", path, errors.Unwrap(err))
	}
	_, err = io.WriteString(f, content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", false, fmt.Errorf("vault: write identity %s: %w", path, errors.Unwrap(err))
	}
	return id.Recipient().String(), true, nil
}

// parseRecipients parses a recipients file, caching by its content.
func (k *keyring) parseRecipients(content []byte) ([]age.Recipient, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if rs, ok := k.recipients[string(content)]; ok {
		return rs, nil
	}
	rs, err := age.ParseRecipients(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", recipientsPath, err)
	}
	k.recipients[string(content)] = rs
	return rs, nil
}

func encrypt(plain []byte, rs []age.Recipient) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(plain) + 256*len(rs) + 64)
	w, err := age.Encrypt(&buf, rs...)
	if err != nil {
		return nil, fmt.Errorf("vault: encrypt: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return nil, fmt.Errorf("vault: encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("vault: encrypt: %w", err)
	}
	return buf.Bytes(), nil
}

// decrypt opens the ciphertext of the memory file at path p.
func (k *keyring) decrypt(p string, ct []byte) ([]byte, error) {
	ids, err := k.identities()
	if err != nil {
		return nil, err
	}
	r, err := age.Decrypt(bytes.NewReader(ct), ids...)
	var nomatch *age.NoIdentityMatchError
	if errors.As(err, &nomatch) {
		return nil, fmt.Errorf("vault: decrypt %s: the identity %s is not among the recipients it was encrypted to (see %s in the vault, or use the right --identity): %w", p, k.path, recipientsPath, ErrDecrypt)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: decrypt %s: damaged ciphertext (%v): %w", p, err, ErrDecrypt)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("vault: decrypt %s: damaged or truncated ciphertext (%v): %w", p, err, ErrDecrypt)
	}
	return plain, nil
}

// plainSize returns the plaintext length of an age file from its length and
// header alone: the payload is a 16-byte nonce, then chunks of up to 64 KiB of
// plaintext, each followed by a 16-byte tag; an empty file is one empty chunk.
func plainSize(ct []byte) (int64, error) {
	h, err := age.ExtractHeader(bytes.NewReader(ct))
	if err != nil || !strings.HasPrefix(string(h), "age-encryption.org/") {
		return 0, fmt.Errorf("vault: not an age file: %w", ErrDecrypt)
	}
	const chunk, tag, nonce = 64 << 10, 16, 16
	payload := int64(len(ct)-len(h)) - nonce
	if payload < tag {
		return 0, fmt.Errorf("vault: truncated age file: %w", ErrDecrypt)
	}
	chunks := (payload + chunk + tag - 1) / (chunk + tag)
	return payload - chunks*tag, nil
}
