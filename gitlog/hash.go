package gitlog

import (
	"encoding/hex"
	"fmt"
)

// Hash is a git object name: the SHA-1 of an object's type, size and content.
// It is gitlog's own type, so that callers depend on gitlog and not on the git
// library beneath it; the conversion happens at gitlog's edge.
type Hash [20]byte

// ZeroHash is the hash of no object: the branch before its first commit.
var ZeroHash Hash

// ParseHash reads a hash written as 40 hexadecimal digits (either case). The
// error says why s is not one.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) {
		return ZeroHash, fmt.Errorf("gitlog: hash %q: not 40 hexadecimal digits", s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return ZeroHash, fmt.Errorf("gitlog: hash %q: not 40 hexadecimal digits", s)
	}
	return h, nil
}

// String returns the hash as 40 lower-case hexadecimal digits.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero tells whether h is ZeroHash.
func (h Hash) IsZero() bool { return h == ZeroHash }

// Mode is the mode of a tree entry: which kind of object it names. Only the
// modes below are written by memvault; a tree from elsewhere may hold any.
type Mode uint32

// The modes of tree entries, as git writes them.
const (
	ModeDir        Mode = 0o040000
	ModeRegular    Mode = 0o100644
	ModeExecutable Mode = 0o100755
	ModeSymlink    Mode = 0o120000
	ModeSubmodule  Mode = 0o160000
)

// String returns the mode as git prints it in a tree: six octal digits.
func (m Mode) String() string { return fmt.Sprintf("%06o", uint32(m)) }
