package gitlog

import (
	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The edge between gitlog's own types and the git library's: gitlog works with
// go-git inside and converts here, so no go-git type crosses up to a caller.

func gg(h Hash) plumbing.Hash { return plumbing.Hash(h) }

func fromGG(h plumbing.Hash) Hash { return Hash(h) }

func ref(name string) plumbing.ReferenceName { return plumbing.ReferenceName(name) }

func computeHash(t plumbing.ObjectType, data []byte) Hash { return gitobject.Compute(t, data) }

func entryOf(te object.TreeEntry) Entry {
	return Entry{Name: te.Name, Hash: Hash(te.Hash), Mode: uint32(te.Mode)}
}
