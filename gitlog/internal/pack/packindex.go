package pack

import (
	"github.com/memvault/memvault/gitlog/internal/object"

	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Errors of IndexPack that tests branch on; both fail the fetch.
var (
	// errDeltaBase: a delta whose base is not in the pack (a thin pack, or
	// deltas that name each other).
	errDeltaBase = errors.New("a delta whose base is not in the pack")
	// errDeltaDepth: a delta chain deeper than git ever makes.
	errDeltaDepth = errors.New("a delta chain deeper than git makes")
)

// maxDeltaObject bounds a delta, its base and its result: deltas are of
// trees and small files (ciphertext does not delta).
const maxDeltaObject = 2 * MaxStruct

// MaxDeltaDepth bounds a chain of deltas: git's pack-objects makes them at
// most 4095 deep (it caps --depth there), so a deeper one is not git's.
const MaxDeltaDepth = 4095

// deltaKeepBudget bounds the instructions of deltas IndexPack keeps from its
// pass through the pack until they are applied, so that most deltas are
// inflated once; a delta past it is read from the pack again when applied.
const deltaKeepBudget = 8 << 20

// minDelta is the size of the shortest delta: its base's size and its
// result's, a byte each at least, and an instruction of two (git's
// DELTA_SIZE_MIN); git's index-pack fails on a shorter one too.
const minDelta = 4

// keptOverhead is what a kept delta costs beyond its bytes: a slice in its
// entry and the allocator's rounding.
const keptOverhead = 64

// fixedWriter appends to buf within its capacity, never growing it: a kept
// delta's instructions take the bytes its header says and no more (a
// stream that inflates to more fails the scan).
type fixedWriter struct{ buf []byte }

func (w *fixedWriter) Write(p []byte) (int, error) {
	if len(p) > cap(w.buf)-len(w.buf) {
		return 0, errors.New("more bytes than the entry's header says")
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// DeltaCacheBudget bounds the resolved contents IndexPack keeps for the
// deltas still to come (git's delta base cache plays the same part). Above
// it the contents nearest the root are dropped, and made again from the
// nearest one kept if they are needed again.
const DeltaCacheBudget = 32 << 20

// IndexPack names every object of the pack in r and returns the pack's index
// and checksum, in bounded memory and in time linear in the pack. go-git's
// parser read every object of a pack whole into memory a second time, after
// hashing it, to resolve deltas: a remote's zlib bomb of a gigabyte cost a
// gigabyte. Here a whole object is streamed into its hash and never held;
// only deltas are resolved in memory, and a delta, its base or its result
// above maxDeltaObject fails the index (and so the fetch, which then moves
// nothing), with an error wrapping object.ErrTooLarge. Resolving each delta from its
// chain's root, as this once did, cost a chain of n deltas n²/2 applications:
// a remote's file edited 300 times and packed as one chain took 40 seconds.
// So deltas are resolved as git's index-pack does, once each, walking the
// tree of deltas under each base. A chain deeper than maxDeltaDepth, a delta
// whose base is not in the pack and deltas that name each other fail the
// index. ctx is checked as it goes: a cancelled fetch stops here too.
func IndexPack(ctx context.Context, r io.ReaderAt) (*idxfile.MemoryIndex, Hash, error) {
	return NewIndexer(DeltaCacheBudget).Index(ctx, r)
}

// NewIndexer returns an indexer that keeps budget bytes of resolved
// contents for later deltas.
func NewIndexer(budget int64) *Indexer {
	return &Indexer{budget: budget, keep: deltaKeepBudget}
}

// indexEntry is what Indexer keeps of an object until the index is
// written: never its content.
type indexEntry struct {
	offset   int64
	size     int64               // inflated; of a delta, its instructions
	stored   plumbing.ObjectType // as in the pack: a delta's is OFS or REF
	typ      plumbing.ObjectType // a delta's is its base's, once resolved
	baseOfs  int64               // an OFS delta's base
	baseRef  Hash                // a REF delta's base
	hash     Hash
	crc      uint32
	resolved bool   // named: a whole object, or a delta applied
	delta    []byte // a delta's instructions, kept from the scan until applied
}

func (e *indexEntry) isDelta() bool {
	return e.stored == plumbing.OFSDeltaObject || e.stored == plumbing.REFDeltaObject
}

// deltaFrame is one object on the path from a base down to the delta being
// resolved, with the children it has still to resolve.
type deltaFrame struct {
	obj        int    // index into packIndexer.objs
	data       []byte // its content, if held
	held       bool
	ofs, ofsTo int // its OFS children not yet resolved: byOfs[ofs:ofsTo]
	ref, refTo int // its REF children not yet resolved: byRef[ref:refTo]
}

// indexStats counts the work of an index, for tests and benchmarks.
type indexStats struct {
	applied    int   // deltas resolved (each once)
	recomputed int   // delta applications to make again a dropped content
	peakHeld   int64 // most bytes of resolved content held at once
}

// Indexer resolves the deltas of one pack.
type Indexer struct {
	budget int64 // bytes of resolved content kept for later deltas
	s      *Scanner
	keep   int64 // bytes of delta instructions to keep from the scan
	kept   int64 // bytes of delta instructions kept
	chunk  int   // bytes a read of the pack asks for, if not scanChunk
	objs   []indexEntry
	byOfs  []int // OFS deltas, by base offset
	byRef  []int // REF deltas, by base name
	stack  []deltaFrame
	low    int   // frames below low hold nothing
	held   int64 // bytes held by the frames
	stats  indexStats
	// seedLeft is how many more bytes of commits and trees to keep in seeds,
	// for the pack reader's cache (see Set.seed): what a fetch brings
	// is read next (its signatures, admission, the merge base), and each
	// was inflated here already. Zero keeps none.
	seedLeft int64
	seeds    []Packed
}

func (x *Indexer) Index(ctx context.Context, r io.ReaderAt) (*idxfile.MemoryIndex, Hash, error) {
	x.s = NewScanner(r)
	if x.chunk > 0 {
		x.s.chunk = x.chunk
	}
	count, err := x.s.header()
	if err != nil {
		return nil, object.Zero, err
	}
	if err := x.scan(ctx, count); err != nil {
		return nil, object.Zero, err
	}
	sum, err := x.s.trailer()
	if err != nil {
		return nil, object.Zero, err
	}
	if err := x.resolve(ctx); err != nil {
		return nil, object.Zero, err
	}
	iw := new(idxfile.Writer)
	iw.OnHeader(count)
	for i := range x.objs {
		o := &x.objs[i]
		iw.OnInflatedObjectHeader(o.typ, o.size, o.offset)
		if err := iw.OnInflatedObjectContent(gg(o.hash), o.offset, o.crc, nil); err != nil {
			return nil, object.Zero, err
		}
	}
	if err := iw.OnFooter(gg(sum)); err != nil {
		return nil, object.Zero, err
	}
	idx, err := iw.Index()
	return idx, sum, err
}

// scan reads the pack once, in order: a whole object is streamed into its
// name; a delta's instructions are kept within deltaKeepBudget, and past it
// only read past (and read again when the delta is resolved).
func (x *Indexer) scan(ctx context.Context, count uint32) error {
	// The count is the remote's word: grow with what really comes.
	x.objs = make([]indexEntry, 0, min(count, 1<<16))
	for i := uint32(0); i < count; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		h, err := x.s.next()
		if err != nil {
			return err
		}
		e := indexEntry{offset: h.offset, size: h.size, stored: h.typ, typ: h.typ, baseOfs: h.baseOfs, baseRef: h.baseRef}
		switch h.typ {
		case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
			if h.size > maxDeltaObject {
				return fmt.Errorf("a delta of %d bytes: %w", h.size, object.ErrTooLarge)
			}
			if h.size < minDelta {
				return fmt.Errorf("delta at %d: %d bytes, shorter than any delta", h.offset, h.size)
			}
			// Each kept delta costs its bytes and its slice's overhead.
			cost := h.size + keptOverhead
			if x.kept+cost > x.keep {
				e.crc, err = x.s.inflate(io.Discard, h)
				break
			}
			w := fixedWriter{buf: make([]byte, 0, h.size)}
			e.crc, err = x.s.inflate(&w, h)
			e.delta = w.buf
			x.kept += cost
		default: // parseEntryHead takes no other type
			if x.seeding(h.typ, h.size) {
				w := fixedWriter{buf: make([]byte, 0, h.size)}
				if e.crc, err = x.s.inflate(&w, h); err == nil {
					e.hash, e.resolved = computeHash(h.typ, w.buf), true
					x.seed(&e, w.buf)
				}
				break
			}
			hw := plumbing.NewHasher(h.typ, h.size)
			e.crc, err = x.s.inflate(hw, h)
			e.hash, e.resolved = fromGG(hw.Sum()), true
		}
		if err != nil {
			return err
		}
		x.objs = append(x.objs, e)
	}
	return nil
}

// resolve names every delta: each whole object's deltas, and theirs in turn,
// are applied depth first, once each (git's index-pack walks them the same
// way). What is not reached from a whole object has no base in the pack.
func (x *Indexer) resolve(ctx context.Context) error {
	for i := range x.objs {
		switch x.objs[i].stored {
		case plumbing.OFSDeltaObject:
			x.byOfs = append(x.byOfs, i)
		case plumbing.REFDeltaObject:
			x.byRef = append(x.byRef, i)
		}
	}
	if len(x.byOfs)+len(x.byRef) == 0 {
		return nil
	}
	slices.SortFunc(x.byOfs, func(a, b int) int { return cmp.Compare(x.objs[a].baseOfs, x.objs[b].baseOfs) })
	slices.SortFunc(x.byRef, func(a, b int) int { return bytes.Compare(x.objs[a].baseRef[:], x.objs[b].baseRef[:]) })
	for i := range x.objs {
		if x.objs[i].isDelta() {
			continue
		}
		if err := x.walk(ctx, i); err != nil {
			return err
		}
	}
	for i := range x.objs {
		if o := &x.objs[i]; !o.resolved {
			return fmt.Errorf("delta at %d: %w", o.offset, errDeltaBase)
		}
	}
	return nil
}

// frame returns the frame of object i, with the range of its children.
func (x *Indexer) frame(i int) deltaFrame {
	o := &x.objs[i]
	f := deltaFrame{obj: i}
	f.ofs, f.ofsTo = span(x.byOfs, func(j int) int { return cmp.Compare(x.objs[j].baseOfs, o.offset) })
	f.ref, f.refTo = span(x.byRef, func(j int) int { return bytes.Compare(x.objs[j].baseRef[:], o.hash[:]) })
	return f
}

// span returns the range of the sorted s where c is 0.
func span(s []int, c func(int) int) (int, int) {
	lo, _ := slices.BinarySearchFunc(s, 0, func(j, _ int) int { return c(j) })
	hi := lo
	for hi < len(s) && c(s[hi]) == 0 {
		hi++
	}
	return lo, hi
}

// next takes f's next child not yet resolved (a REF delta is named by every
// object of its base's name, and a delta may make its base again), or
// reports none left.
func (x *Indexer) next(f *deltaFrame) (int, bool) {
	for f.ref < f.refTo {
		c := x.byRef[f.ref]
		f.ref++
		if !x.objs[c].resolved {
			return c, true
		}
	}
	for f.ofs < f.ofsTo {
		c := x.byOfs[f.ofs]
		f.ofs++
		if !x.objs[c].resolved {
			return c, true
		}
	}
	return 0, false
}

func (f *deltaFrame) more() bool { return f.ref < f.refTo || f.ofs < f.ofsTo }

// walk resolves the tree of deltas under the whole object root, depth first.
// The stack holds the path from root to the delta being resolved; a frame
// holds its content while it has children left, within the budget.
func (x *Indexer) walk(ctx context.Context, root int) error {
	f := x.frame(root)
	if !f.more() {
		return nil
	}
	x.stack = append(x.stack[:0], f)
	x.low = 0
	defer func() {
		for i := range x.stack {
			x.release(i)
		}
		x.stack = x.stack[:0]
	}()
	for len(x.stack) > 0 {
		top := len(x.stack) - 1
		c, ok := x.next(&x.stack[top])
		if !ok {
			x.release(top)
			x.stack = x.stack[:top]
			x.low = min(x.low, max(top-1, 0))
			continue
		}
		if len(x.stack) > MaxDeltaDepth {
			return fmt.Errorf("delta at %d: %w", x.objs[c].offset, errDeltaDepth)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		base, err := x.content(top)
		if err != nil {
			return err
		}
		data, err := x.apply(c, base)
		if err != nil {
			return err
		}
		// A base's content is not needed once its last child is made.
		if !x.stack[top].more() {
			x.release(top)
		}
		o := &x.objs[c]
		o.typ = x.objs[x.stack[0].obj].typ
		o.hash = computeHash(o.typ, data)
		o.resolved = true
		x.stats.applied++
		if x.seeding(o.typ, int64(len(data))) {
			x.seed(o, data)
		}
		f := x.frame(c)
		if !f.more() {
			continue // a leaf: its content is needed no more
		}
		x.stack = append(x.stack, f)
		x.hold(len(x.stack)-1, data)
		x.prune()
	}
	return nil
}

// content returns the content of the frame at level, making it again from
// the nearest frame above that holds its own (or from the pack, for the
// root) if it was dropped.
func (x *Indexer) content(level int) ([]byte, error) {
	if f := &x.stack[level]; f.held {
		return f.data, nil
	}
	j := level
	for j > 0 && !x.stack[j].held {
		j--
	}
	var data []byte
	if x.stack[j].held {
		data = x.stack[j].data
	} else {
		var err error
		if data, err = x.readWhole(x.stack[j].obj); err != nil {
			return nil, err
		}
	}
	for k := j + 1; k <= level; k++ {
		var err error
		if data, err = x.apply(x.stack[k].obj, data); err != nil {
			return nil, err
		}
		x.stats.recomputed++
	}
	x.hold(level, data)
	return data, nil
}

// readWhole reads a whole object's content from the pack, as a base.
func (x *Indexer) readWhole(i int) ([]byte, error) {
	o := &x.objs[i]
	if o.size > maxDeltaObject {
		return nil, fmt.Errorf("a delta base of %d bytes: %w", o.size, object.ErrTooLarge)
	}
	return x.reread(o)
}

// reread inflates the entry of o from the pack again, into a buffer of the
// size its header says.
func (x *Indexer) reread(o *indexEntry) ([]byte, error) {
	h, err := x.s.At(x.s.r, o.offset)
	if err != nil {
		return nil, err
	}
	w := fixedWriter{buf: make([]byte, 0, h.size)}
	_, err = x.s.inflate(&w, h)
	return w.buf, err
}

// apply applies delta i's instructions to base: those kept from the scan
// (which it then drops: a content made again is rare), or else read from
// the pack again.
func (x *Indexer) apply(i int, base []byte) ([]byte, error) {
	o := &x.objs[i]
	delta := o.delta
	if delta != nil {
		o.delta = nil
		x.kept -= int64(len(delta)) + keptOverhead
	} else {
		var err error
		if delta, err = x.reread(o); err != nil {
			return nil, err
		}
	}
	if n := deltaTargetSize(delta); n > maxDeltaObject {
		return nil, fmt.Errorf("a delta's result of %d bytes: %w", n, object.ErrTooLarge)
	}
	out, err := packfile.PatchDelta(base, delta)
	if err != nil {
		return nil, fmt.Errorf("delta at %d: %w", o.offset, err)
	}
	return out, nil
}

// hold keeps data as the content of the frame at level.
func (x *Indexer) hold(level int, data []byte) {
	f := &x.stack[level]
	if f.held {
		return
	}
	f.data, f.held = data, true
	x.held += int64(len(data))
	x.stats.peakHeld = max(x.stats.peakHeld, x.held)
	x.low = min(x.low, level)
}

// release drops the content of the frame at level.
func (x *Indexer) release(level int) {
	f := &x.stack[level]
	if !f.held {
		return
	}
	x.held -= int64(len(f.data))
	f.data, f.held = nil, false
}

// prune drops contents, those nearest the root first, until what is held
// fits the budget or only the top frame holds any: the top's is needed next.
func (x *Indexer) prune() {
	for x.held > x.budget && x.low < len(x.stack)-1 {
		x.release(x.low)
		x.low++
	}
}

// seeding reports whether an object of type t and size bytes is kept for the
// pack reader: a commit or a tree that fits what is left of seedLeft and that
// the reader's cache would keep.
func (x *Indexer) seeding(t plumbing.ObjectType, size int64) bool {
	return (t == plumbing.CommitObject || t == plumbing.TreeObject) &&
		size <= x.seedLeft && size <= packReadCache/8
}

// seed keeps data, the content of o, for the pack reader.
func (x *Indexer) seed(o *indexEntry, data []byte) {
	x.seedLeft -= int64(len(data))
	x.seeds = append(x.seeds, Packed{Off: o.offset, Type: o.typ, Data: data})
}

// deltaTargetSize reads the size of a delta's result from its header: two
// little-endian base-128 numbers, the base's size and the result's.
func deltaTargetSize(delta []byte) int64 {
	var n [2]int64
	for i := range n {
		var shift uint
		for len(delta) > 0 {
			b := delta[0]
			delta = delta[1:]
			n[i] |= int64(b&0x7f) << shift
			shift += 7
			if b&0x80 == 0 || shift > 56 {
				break
			}
		}
	}
	return n[1]
}

// Applied is how many deltas the last Index resolved.
func (x *Indexer) Applied() int { return x.stats.applied }
