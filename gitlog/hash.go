package gitlog

import (
	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"fmt"
)

// Hash is a git object name: the SHA-1 of an object's type, size and content,
// with String (40 lower-case hexadecimal digits) and IsZero. It is gitlog's
// own type, shared with the engine beneath it, so that callers depend on
// gitlog and not on the git library; the conversion happens at gitlog's edge.
type Hash = gitobject.Hash

// ZeroHash is the hash of no object: the branch before its first commit.
var ZeroHash Hash

// ParseHash reads a hash written as 40 hexadecimal digits (either case). The
// error says why s is not one.
func ParseHash(s string) (Hash, error) {
	h, err := gitobject.Parse(s)
	if err != nil {
		return ZeroHash, fmt.Errorf("gitlog: %w", err)
	}
	return h, nil
}

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
