// Package pack is gitlog's work on git's pack files: writing them (Builder,
// from objects, from deltas, or copying entries of other packs, its index
// built on the way), reading them (Set: every object straight from the packs'
// bytes, through pack files held open, delta chains resolved within a bounded
// cache), scanning
// and indexing a pack that arrives (Index, as git index-pack does), the search
// for deltas (as git pack-objects does), merging packs (Merge), and taking a
// received pack in (Sink).
//
// What it promises: a pack is put in place only whole, synced, its index
// first; nothing inflated grows past the size its header gives or the limit
// asked; an entry copied from another pack is checked against that pack's
// index (CRC-32) and never inflated; a pack opened is read through the file
// held open, so a pack merged away meanwhile stays readable to whoever holds
// it; anything unusual (a damaged entry, another type, over a limit) is
// refused, never guessed, and never as absent: an object no pack holds is the
// only one ErrNotInPacks names.
package pack

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/internal/object"
)

type (
	// Hash is an object's name.
	Hash = object.Hash
	// rawObject is an encoded object.
	rawObject = object.Object
)

// MaxStruct bounds a commit or a tree: nothing larger is read as one.
const MaxStruct = 32 << 20

// LargeObject is the size past which an object is streamed rather than held
// whole.
const LargeObject = 2 << 20

func gg(h Hash) plumbing.Hash { return plumbing.Hash(h) }

func fromGG(h plumbing.Hash) Hash { return Hash(h) }

func computeHash(t plumbing.ObjectType, data []byte) Hash { return object.Compute(t, data) }
