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

// The modes git records for tree entries (Entry.Mode): which kind of object
// an entry names. Only modeDir and modeRegular are written by memvault; a tree
// from elsewhere may hold any.
const (
	modeDir        uint32 = 0o040000
	modeRegular    uint32 = 0o100644
	modeExecutable uint32 = 0o100755
	modeSymlink    uint32 = 0o120000
	modeSubmodule  uint32 = 0o160000
)
