package seal

import (
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
)

// Names are sealed one path component at a time, with the plaintext path of
// the folder that holds them as associated data: "/memories/notes/a.md" is
// stored as memories/N1/N2, where N1 seals "notes" under "/memories" and N2
// seals "a.md" under "/memories/notes". See the package comment for why.

// nameEncoding writes sealed names in lower-case base32 without padding: only
// a-z and 2-7, so a stored name is a valid file name on Linux, macOS and
// Windows, has no case twin on a case-insensitive file system, never starts
// with a dot, and is never a reserved Windows name (it is at least 26 letters
// long).
var nameEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

const (
	// MaxStoredName is the longest stored name: what git hosts and every
	// file system in use take as one path component.
	MaxStoredName = 255
	// MaxName is the longest plaintext name that seals within MaxStoredName:
	// AES-SIV adds 16 bytes, base32 writes 5 bytes as 8 letters.
	MaxName = MaxStoredName*5/8 - sivLen
	sivLen  = 16
)

var (
	// ErrNotSealed is wrapped by the error [Key.OpenName] returns for a stored
	// name that was not sealed under this key in this folder: one written by
	// anyone without the key, or moved from another folder.
	ErrNotSealed = errors.New("not sealed under this vault's key")
	// ErrNameTooLong is wrapped by the error [Key.SealName] returns for a name
	// of more than MaxName bytes.
	ErrNameTooLong = fmt.Errorf("name over the sealed format's limit of %d bytes", MaxName)
	// ErrBadName is wrapped by the error [Key.SealName] returns for a name that
	// is no path component: empty, "." or "..", or holding '/' or NUL.
	ErrBadName = errors.New("not a path component")
)

// nameBuckets are the lengths a generation's key (format 3) pads a name to
// before sealing it, so that its stored length tells the host only which of
// these it is within: up to 24 bytes, 48, 96, or MaxName. "a.md" and
// "passwords.md" look alike. A key of format 2 pads nothing.
var nameBuckets = [...]int{24, 48, 96, MaxName}

// nameBucket is the length a name of n bytes is padded to.
func nameBucket(n int) int {
	for _, b := range nameBuckets {
		if n <= b {
			return b
		}
	}
	return n
}

func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..", strings.ContainsAny(name, "/\x00"):
		return ErrBadName
	case len(name) > MaxName:
		return ErrNameTooLong
	}
	return nil
}

// SealName returns the stored name of the path component name inside the
// folder whose plaintext memory path is dir ("/memories" for the top). The
// same key, dir and name always give the same stored name. The error wraps
// [ErrNameTooLong] or [ErrBadName]; it quotes the name's length, never the
// name.
func (k *Key) SealName(dir, name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", fmt.Errorf("seal: name of %d bytes: %w", len(name), err)
	}
	if stored, ok := k.cache.sealing(dir, name); ok {
		return stored, nil
	}
	pt := []byte(name)
	if k.gen != nil {
		pt = append(pt, make([]byte, nameBucket(len(name))-len(name))...) // NUL: no name holds one
	}
	ct, err := k.names.EncryptDeterministically(pt, []byte(dir))
	if err != nil {
		return "", fmt.Errorf("seal: name: %w", err)
	}
	stored := nameEncoding.EncodeToString(ct)
	k.cache.put(dir, name, stored)
	return stored, nil
}

// OpenName returns the plaintext name of the stored name inside the folder
// whose plaintext memory path is dir. The error wraps [ErrNotSealed] when stored
// is not exactly what [Key.SealName] makes of some name in dir under this key:
// another alphabet or case, a non-canonical encoding, a name too long, a wrong
// tag, or a name sealed for another folder or under another key. Such an error
// holds no part of stored, which may be anything a remote wrote.
func (k *Key) OpenName(dir, stored string) (string, error) {
	if name, ok := k.cache.opening(dir, stored); ok {
		return name, nil
	}
	if len(stored) > MaxStoredName || len(stored) < nameEncoding.EncodedLen(sivLen+1) {
		return "", fmt.Errorf("seal: open name: %w (a name of %d bytes)", ErrNotSealed, len(stored))
	}
	ct, err := nameEncoding.DecodeString(stored)
	// base32 ignores the unused low bits of the last letter: two spellings of
	// one sealed name would be two entries that open to the same name.
	if err != nil || nameEncoding.EncodeToString(ct) != stored {
		return "", fmt.Errorf("seal: open name: %w (not in the sealed alphabet)", ErrNotSealed)
	}
	pt, err := k.names.DecryptDeterministically(ct, []byte(dir))
	if err != nil {
		return "", fmt.Errorf("seal: open name: %w", ErrNotSealed)
	}
	if k.gen != nil {
		// The padding a generation adds, and only that: one stored name a
		// name.
		n := len(pt)
		for n > 0 && pt[n-1] == 0 {
			n--
		}
		if nameBucket(n) != len(pt) {
			return "", fmt.Errorf("seal: open name: %w (not padded to its bucket)", ErrNotSealed)
		}
		pt = pt[:n]
	}
	name := string(pt)
	if checkName(name) != nil {
		// Only a holder of the key can seal this; still, never hand back a
		// name a caller would split or refuse.
		return "", fmt.Errorf("seal: open name: %w (opens to no path component)", ErrNotSealed)
	}
	k.cache.put(dir, name, stored)
	return name, nil
}

// SealPath returns the stored form of the memory path p below root (both
// plaintext, "/memories" and "/memories/notes/a.md"): each component of p
// after root sealed within its plaintext parent, joined by "/". It returns ""
// for root itself. The error is SealName's, for the first component that fails.
func (k *Key) SealPath(root, p string) (string, error) {
	if p == root {
		return "", nil
	}
	rest, ok := strings.CutPrefix(p, root+"/")
	if !ok {
		return "", fmt.Errorf("seal: path is not below %s", root)
	}
	var b strings.Builder
	dir := root
	for seg := range strings.SplitSeq(rest, "/") {
		s, err := k.SealName(dir, seg)
		if err != nil {
			return "", err
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(s)
		dir += "/" + seg
	}
	return b.String(), nil
}

// OpenPath is SealPath undone: stored is a "/"-joined run of sealed names below
// root, and the result is the plaintext memory path. The error is OpenName's,
// for the first component that fails.
func (k *Key) OpenPath(root, stored string) (string, error) {
	if stored == "" {
		return root, nil
	}
	p := root
	for seg := range strings.SplitSeq(stored, "/") {
		name, err := k.OpenName(p, seg)
		if err != nil {
			return "", err
		}
		p += "/" + name
	}
	return p, nil
}
