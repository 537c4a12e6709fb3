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
	"strings"
	"sync"

	"filippo.io/age"
	"github.com/tink-crypto/tink-go/v2/daead/subtle"
)

// KeySize is the length of a vault key: one AES-SIV key (two AES-256 keys,
// one for S2V's CMAC and one for CTR), the size Tink requires.
const KeySize = subtle.AESSIVKeySize

// keyHeader is the first line of a key's file form. A later key format gets a
// new line, which this version refuses rather than misreads. A key of v2 (a
// generation, format 3) has its generation's age identity on a third line.
const (
	keyHeader   = "memvault-vault-key/v1\n"
	keyHeaderV2 = "memvault-vault-key/v2\n"
)

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
	chain              *subtle.AESSIV
	fingerprint        string
	cache              nameCache
	// gen is the generation's age identity (a key of v2), to which every
	// memory file of its trees is also encrypted, so that whoever opens the
	// key reads the contents too; nil for a key of v1.
	gen age.Identity
	rec age.Recipient
	// idKey is PathID's subkey, derived on first use.
	idOnce sync.Once
	idKey  []byte
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
		{"memvault seal keychain v1", &k.chain},
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

// NewGeneration returns a fresh random vault key with an age identity of its
// own: a generation of format 3. With pq the identity is age's post-quantum
// hybrid (ML-KEM-768 with X25519), for a vault whose recipients are
// post-quantum, since age refuses to mix the two kinds in one file; else
// X25519.
func NewGeneration(pq bool) (*Key, error) {
	k, err := NewKey()
	if err != nil {
		return nil, err
	}
	var id age.Identity
	if pq {
		id, err = age.GenerateHybridIdentity()
	} else {
		id, err = age.GenerateX25519Identity()
	}
	if err != nil {
		return nil, fmt.Errorf("seal: new generation: %w", err)
	}
	return k.withIdentity(id)
}

// withIdentity gives k the generation identity id.
func (k *Key) withIdentity(id age.Identity) (*Key, error) {
	switch i := id.(type) {
	case *age.X25519Identity:
		k.gen, k.rec = i, i.Recipient()
	case *age.HybridIdentity:
		k.gen, k.rec = i, i.Recipient()
	default:
		return nil, fmt.Errorf("seal: a generation identity of an unknown kind: %w", ErrKeyFormat)
	}
	return k, nil
}

// Generation reports whether k is a generation of format 3, with an age
// identity of its own.
func (k *Key) Generation() bool { return k.gen != nil }

// Recipient is the age recipient of k's generation, to which every memory file
// sealed under k is encrypted too; nil for a key that is no generation.
func (k *Key) Recipient() age.Recipient { return k.rec }

// Identity is the age identity of k's generation, which opens every memory
// file sealed under k; nil for a key that is no generation.
func (k *Key) Identity() age.Identity { return k.gen }

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
	header := keyHeader
	if k.gen != nil {
		header = keyHeaderV2
	}
	b := make([]byte, 0, len(header)+base64.StdEncoding.EncodedLen(KeySize)+1)
	b = append(b, header...)
	b = base64.StdEncoding.AppendEncode(b, k.raw[:])
	b = append(b, '\n')
	if k.gen != nil {
		b = append(b, fmt.Sprint(k.gen)...)
		b = append(b, '\n')
	}
	return b
}

// ParseKey reads a key's file form, as [Key.Marshal] writes it. The error wraps
// [ErrKeyFormat] for anything else: another version line, a key of another
// length, bad base64, trailing bytes. It never includes key material.
func ParseKey(b []byte) (*Key, error) {
	rest, ok := bytes.CutPrefix(b, []byte(keyHeader))
	v2 := false
	if !ok {
		if rest, v2 = bytes.CutPrefix(b, []byte(keyHeaderV2)); !v2 {
			line, _, _ := bytes.Cut(b, []byte("\n"))
			if len(line) > 40 || !bytes.HasPrefix(line, []byte("memvault-vault-key/")) {
				return nil, fmt.Errorf("seal: read key: %w (no version line)", ErrKeyFormat)
			}
			return nil, fmt.Errorf("seal: read key: %w (version %q)", ErrKeyFormat, line[len("memvault-vault-key/"):])
		}
	}
	enc, after, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || len(enc) != base64.StdEncoding.EncodedLen(KeySize) || !v2 && len(after) > 0 {
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
	k, err := newKey(raw)
	if err != nil || !v2 {
		return k, err
	}
	line, ok := bytes.CutSuffix(after, []byte("\n"))
	if !ok || bytes.IndexByte(line, '\n') >= 0 || !bytes.HasPrefix(line, []byte("AGE-SECRET-KEY-")) {
		return nil, fmt.Errorf("seal: read key: %w (no generation identity line)", ErrKeyFormat)
	}
	var id age.Identity
	if s := string(line); strings.HasPrefix(s, "AGE-SECRET-KEY-PQ-1") {
		id, err = age.ParseHybridIdentity(s)
	} else {
		id, err = age.ParseX25519Identity(s)
	}
	if err != nil {
		// age's error quotes no key material; it is not passed on anyway.
		return nil, fmt.Errorf("seal: read key: %w (a generation identity that does not parse)", ErrKeyFormat)
	}
	return k.withIdentity(id)
}
