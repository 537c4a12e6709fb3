package pack

import (
	"bytes"
	"compress/zlib"
	"context"
	"hash/fnv"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/memvault/memvault/gitlog/internal/object"
)

// Each commit writes new trees along its path, and a folder of a hundred
// names is a tree of several kilobytes whose versions differ by one entry:
// stored whole, trees are most of a vault's bytes. The packs that gc, the
// merge of packs and the flush of the journal write store them as deltas, as
// git's pack-objects does:
// the objects that may delta are sorted so that the versions of one folder
// stand side by side (by type, by a hash of the tree's first name, then
// newest first), and each is compared with the few before it of the same
// type and name (a window). git sorts by size where this sorts by age: a
// folder's versions differ by the entries changed between them, so its
// nearest version in time is the one most like it, and sizes (all alike
// when files change but no name does) would shuffle them;
// the smallest delta is kept when it is much smaller than the object (under
// half, less the deeper its base), and no chain of deltas grows longer than a
// depth limit. Deltas name their base (REF_DELTA), so an entry keeps its
// meaning when the merge of packs copies it to another offset; a base is
// always in the same pack. Blobs are age ciphertexts, which never delta: they
// are not compared at all.

const (
	// DefaultWindow and defaultDeltaDepth are git's defaults for
	// pack.window and pack.depth.
	DefaultWindow = 10
	DefaultDepth  = 50
	// maxDeltaTarget is the biggest object compared for deltas, and
	// deltaWindowMemory bounds the bytes the window holds: a background job's
	// memory stays bounded whatever a history holds.
	maxDeltaTarget    = 16 << 20
	deltaWindowMemory = 64 << 20
	// deltaMemory bounds the compressed deltas a pack keeps until it is
	// written; past it, what remains is written whole.
	deltaMemory = 64 << 20
)

// DeltaCand is an object stored whole that may become a delta.
type DeltaCand struct {
	hash   Hash
	typ    plumbing.ObjectType
	size   int64
	name   uint32 // see nameHash
	order  int    // how recent it is, the newest 0: see searchDeltas
	height int    // the longest chain of deltas already based on it
}

// Delta is an object the search stores as a delta of base.
type Delta struct {
	base  Hash
	size  int64  // of the delta itself, as its entry's header gives it
	zdata []byte // the delta, compressed
}

// DeltaSearch is the outcome of SearchDeltas.
type DeltaSearch struct {
	Deltas map[Hash]Delta
}

// MayDelta tells whether an object of type t and size bytes is compared with
// others.
func MayDelta(t plumbing.ObjectType, size int64) bool {
	switch t {
	case plumbing.TreeObject, plumbing.CommitObject, plumbing.TagObject:
		return size > 0 && size <= maxDeltaTarget
	}
	return false
}

// NameHash groups the versions of one folder: the hash of a tree's first
// name, which a new version of the folder rarely changes, taken from the
// start of its content. Other objects have none, as in git.
func NameHash(t plumbing.ObjectType, start []byte) uint32 {
	if t != plumbing.TreeObject {
		return 0
	}
	sp := bytes.IndexByte(start, ' ')
	if sp < 0 {
		return 0
	}
	end := bytes.IndexByte(start[sp+1:], 0)
	if end < 0 {
		end = len(start) - sp - 1
	}
	h := fnv.New32a()
	h.Write(start[sp+1 : sp+1+end])
	return h.Sum32()
}

// NameHashPrefix is how much of an object nameHash reads.
const NameHashPrefix = 512

// windowEntry is an object of the window, which later ones may delta against.
type windowEntry struct {
	hash  Hash
	data  []byte
	depth int
}

// SearchDeltas compares the candidates, read by load, as described above;
// window and maxDepth are pack.window and pack.depth. A candidate's height
// counts against the depth of a delta it becomes.
func SearchDeltas(ctx context.Context, cands []DeltaCand, load func(Hash) ([]byte, error), window, maxDepth int) (DeltaSearch, error) {
	res := DeltaSearch{Deltas: map[Hash]Delta{}}
	if window <= 0 || len(cands) < 2 {
		return res, nil
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.typ != b.typ {
			return a.typ < b.typ
		}
		if a.name != b.name {
			return a.name < b.name
		}
		if a.order != b.order {
			return a.order < b.order
		}
		return a.size > b.size
	})
	var win []windowEntry
	winBytes, kept := 0, 0
	hits, misses := 0, 0 // of the group: objects compared that became deltas, and that did not
	var zbuf bytes.Buffer
	for i, c := range cands {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		if i > 0 && !sameGroup(cands[i-1], c) {
			// No delta across types, nor between two folders: another
			// folder's tree shares neither names nor hashes, and comparing
			// them was most of the search's time where a vault spreads its
			// files over many folders.
			win, winBytes = win[:0], 0
			hits, misses = 0, 0
		}
		alone := (i == 0 || !sameGroup(cands[i-1], c)) && (i+1 == len(cands) || !sameGroup(cands[i+1], c))
		if alone {
			continue // nothing to compare it with: not even read
		}
		if hits == 0 && misses >= giveUpMisses {
			// A group whose first objects never delta is one whose
			// objects share nothing (sealed commits, whose messages and
			// signatures differ in every byte): the rest stay whole,
			// unread. Where a group does delta, one of the first few
			// almost always does (three commits in four of a plain
			// vault's history).
			continue
		}
		data, err := load(c.hash)
		if err != nil {
			return res, err
		}
		best, bestBase, bestDepth := []byte(nil), -1, 0
		limit := maxDepth - c.height
		tried := false
		for k := len(win) - 1; k >= 0 && limit > 0 && kept < deltaMemory; k-- {
			if tried && c.typ == plumbing.CommitObject {
				// Commits are all one group, and each differs from every
				// other in the same places (its tree, parents, times, path
				// and signature, which shares nothing with another): the
				// nearest one's delta is about the best, and where it is
				// too big (a sealed commit's message shares nothing either)
				// the others' are too. Trying the whole window for each
				// commit was half the time a push spent merging a remote's
				// packs, and comparing bytes that match nowhere is the
				// delta encoder's slowest case.
				break
			}
			w := win[k]
			if w.depth >= limit {
				continue
			}
			// git's try_delta: the target's size halved, less the deeper the base.
			maxSize := int64(len(data))/2 - 20
			refDepth := 1
			if best != nil {
				maxSize, refDepth = int64(len(best)), bestDepth
			}
			maxSize = maxSize * int64(limit-w.depth) / int64(limit-refDepth+1)
			if maxSize <= 0 {
				continue
			}
			if diff := int64(len(data)) - int64(len(w.data)); diff >= maxSize {
				continue
			}
			if len(data) < len(w.data)/32 {
				continue
			}
			d, mid := edgeDelta(w.data, data)
			near := mid <= nearInsert
			if !near {
				// More than a few entries apart: the encoder finds what the
				// two share in their middle too.
				if e := packfile.DiffDelta(w.data, data); len(e) < len(d) {
					d = e
				}
			}
			tried = true
			if int64(len(d)) >= maxSize {
				if near {
					// An older version differs from it at least as
					// much: only a shallower base's looser size rule
					// could take its delta, which saved nothing in the
					// histories tried (pack.depth 4 and 50).
					break
				}
				continue
			}
			if best != nil && len(d) == len(best) && w.depth+1 >= bestDepth {
				continue
			}
			best, bestBase, bestDepth = d, k, w.depth+1
			if near || len(d) <= len(data)/16 {
				// Good enough: the nearest version of a folder almost always
				// gives the smallest delta, and trying the rest of the window
				// was most of the search's time.
				break
			}
		}
		depth := 0
		if best != nil {
			// The encoder is not trusted blindly: what is stored must give
			// the object back.
			if got, err := packfile.PatchDelta(win[bestBase].data, best); err == nil && bytes.Equal(got, data) {
				zbuf.Reset()
				zw := object.Writers.Get().(*zlib.Writer)
				zw.Reset(&zbuf)
				zw.Write(best)
				zw.Close()
				object.Writers.Put(zw)
				res.Deltas[c.hash] = Delta{base: win[bestBase].hash, size: int64(len(best)), zdata: bytes.Clone(zbuf.Bytes())}
				depth = bestDepth
				kept += zbuf.Len() + 64
			}
		}
		switch {
		case depth > 0:
			hits++
		case len(win) > 0:
			misses++
		}
		win = append(win, windowEntry{hash: c.hash, data: data, depth: depth})
		winBytes += len(data)
		for len(win) > window || len(win) > 1 && winBytes > deltaWindowMemory {
			winBytes -= len(win[0].data)
			win = win[1:]
		}
	}
	return res, nil
}

// sameGroup tells whether a and b may be compared: of one type and name.
func sameGroup(a, b DeltaCand) bool { return a.typ == b.typ && a.name == b.name }

// edgeDelta is the delta that copies what base and target share at their start
// and at their end, and inserts what lies between. Two versions of a folder
// mostly differ in one entry (a file's new hash, a name added or removed), and
// for those it is the delta the encoder would find, found with two compares
// where the encoder hashes every block of the base: comparing trees was about
// half of what the local-path server spent writing a fetch's pack, and sealed
// names make a folder's tree twice as long.
//
// It returns the delta and how many bytes it inserts. When that is at most
// nearInsert, no other delta of the two is much smaller, and in practice none
// of a version further back, which differs from the target at least as much.
func edgeDelta(base, target []byte) (delta []byte, inserted int) {
	n := min(len(base), len(target))
	pre := 0
	for pre < n && base[pre] == target[pre] {
		pre++
	}
	suf := 0
	for suf < n-pre && base[len(base)-1-suf] == target[len(target)-1-suf] {
		suf++
	}
	d := appendDeltaSize(nil, len(base))
	d = appendDeltaSize(d, len(target))
	d = appendDeltaCopy(d, 0, pre)
	for mid := target[pre : len(target)-suf]; len(mid) > 0; {
		k := min(len(mid), 127)
		d = append(d, byte(k))
		d = append(d, mid[:k]...)
		mid = mid[k:]
	}
	return appendDeltaCopy(d, len(base)-suf, suf), len(target) - pre - suf
}

// giveUpMisses is how many objects of a group are compared, none of them
// becoming a delta, before the search leaves the rest of the group whole.
const giveUpMisses = 16

// nearInsert is the most an edge delta may insert for the search to take it
// as it is: about an entry of a tree with a sealed name.
const nearInsert = 64

// appendDeltaSize appends n as a delta's header holds a size: seven bits a
// byte, the lowest first.
func appendDeltaSize(d []byte, n int) []byte {
	for n >= 0x80 {
		d = append(d, byte(n)|0x80)
		n >>= 7
	}
	return append(d, byte(n))
}

// appendDeltaCopy appends the instructions that copy n bytes of the base from
// off: a flag byte naming which bytes of the offset and of the size follow,
// then those that are not zero. A size takes three bytes, so a long copy is
// cut in pieces.
func appendDeltaCopy(d []byte, off, n int) []byte {
	const maxCopy = 1<<24 - 1
	for n > 0 {
		k := min(n, maxCopy)
		op, at := byte(0x80), len(d)
		d = append(d, 0)
		for i := range 4 {
			if b := byte(off >> (8 * i)); b != 0 {
				op |= 1 << i
				d = append(d, b)
			}
		}
		for i := range 3 {
			if b := byte(k >> (8 * i)); b != 0 {
				op |= 0x10 << i
				d = append(d, b)
			}
		}
		d[at] = op
		off += k
		n -= k
	}
	return d
}
