package seal

import (
	"bytes"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	cryptosubtle "crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/tink-crypto/tink-go/v2/daead/subtle"
)

// KeySize is the length of a vault key: one AES-SIV key (two AES-256 keys,
// one for S2V's CMAC and one for CTR), the size Tink requires.
const KeySize = subtle.AESSIVKeySize

// keyHeader is the first line of a key's file form. A later key format gets a
// new line, which this version refuses rather than misreads.
const keyHeader = "memvault-vault-key/v1\n"

// ErrKeyFormat is wrapped by the error [ParseKey] returns for a file that is not
// a vault key this version knows.
var ErrKeyFormat = errors.New("not a vault key this memvault knows")

// Key is a vault key, and the ciphers derived from it. One key seals names,
// messages and sizes, each under its own subkey (HKDF-SHA256 with a label per
// use), so a sealed name can never be passed off as a sealed message or size.
// A Key is safe for concurrent use.
type Key struct {
	raw                [KeySize]byte
	names, msgs, sizes *subtle.AESSIV
	fingerprint        string
	cache              nameCache
}

// NewKey returns a fresh random vault key.
func NewKey() (*Key, error) {
	var raw [KeySize]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("seal: new key: %w", err)
	}
	return newKey(raw)
}

func newKey(raw [KeySize]byte) (*Key, error) {
	k := &Key{raw: raw}
	for _, sub := range []struct {
		label string
		into  **subtle.AESSIV
	}{
		{"memvault seal names v1", &k.names},
		{"memvault seal messages v1", &k.msgs},
		{"memvault seal sizes v1", &k.sizes},
	} {
		b, err := hkdf.Key(sha256.New, raw[:], nil, sub.label, KeySize)
		if err != nil {
			return nil, fmt.Errorf("seal: derive key: %w", err)
		}
		if *sub.into, err = subtle.NewAESSIV(b); err != nil {
			return nil, fmt.Errorf("seal: derive key: %w", err)
		}
	}
	id, err := hkdf.Key(sha256.New, raw[:], nil, "memvault seal fingerprint v1", 8)
	if err != nil {
		return nil, fmt.Errorf("seal: derive key: %w", err)
	}
	k.fingerprint = fmt.Sprintf("%x", id)
	return k, nil
}

// Fingerprint names the key without revealing it: 16 hex digits, the same on
// every clone, different for a rotated key. It is for messages and logs.
func (k *Key) Fingerprint() string { return k.fingerprint }

// Equal reports whether k and o are the same vault key, in constant time.
func (k *Key) Equal(o *Key) bool {
	return cryptosubtle.ConstantTimeCompare(k.raw[:], o.raw[:]) == 1
}

// Marshal returns the key's file form, the plaintext of `.memvault/key`: a
// version line, then the key in base64 on one line. The caller encrypts it to
// the vault's recipients like any memory file; it must never be stored in the
// clear.
func (k *Key) Marshal() []byte {
	b := make([]byte, 0, len(keyHeader)+base64.StdEncoding.EncodedLen(KeySize)+1)
	b = append(b, keyHeader...)
	b = base64.StdEncoding.AppendEncode(b, k.raw[:])
	return append(b, '\n')
}

// ParseKey reads a key's file form, as [Key.Marshal] writes it. The error wraps
// [ErrKeyFormat] for anything else: another version line, a key of another
// length, bad base64, trailing bytes. It never includes key material.
func ParseKey(b []byte) (*Key, error) {
	rest, ok := bytes.CutPrefix(b, []byte(keyHeader))
	if !ok {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if len(line) > 40 || !bytes.HasPrefix(line, []byte("memvault-vault-key/")) {
			return nil, fmt.Errorf("seal: read key: %w (no version line)", ErrKeyFormat)
		}
		return nil, fmt.Errorf("seal: read key: %w (version %q)", ErrKeyFormat, line[len("memvault-vault-key/"):])
	}
	enc, ok := bytes.CutSuffix(rest, []byte("\n"))
	if !ok || len(enc) != base64.StdEncoding.EncodedLen(KeySize) {
		return nil, fmt.Errorf("seal: read key: %w (not one line of %d bytes in base64)", ErrKeyFormat, KeySize)
	}
	buf := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	n, err := base64.StdEncoding.Strict().Decode(buf, enc)
	if err != nil || n != KeySize {
		return nil, fmt.Errorf("seal: read key: %w (bad base64)", ErrKeyFormat)
	}
	var raw [KeySize]byte
	copy(raw[:], buf)
	clear(buf)
	return newKey(raw)
}
