package pack

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"github.com/memvault/memvault/gitlog/internal/object"
)

// Set is gitlog's one reader of packed objects, of every type: the lookup of
// an object (gitlog's journal, then Set, then the loose objects) reads
// nothing through go-git's storage. Set holds each pack it lists open, and
// reads only through the file it holds: a pack that a packer merged away, or
// a gc removed, stays readable through its descriptor until Set lists the
// packs again, which it does only when an object is in none of them; and a
// stream of an object keeps its pack open until the stream is closed. So
// whatever a reader found stays readable across merges by construction, not
// by looking again.
//
// A walk over history (admission of what a fetch brought, the local-path
// server choosing what to send) reads thousands of commits and trees. Through
// go-git's object storage each read looked the object up pack by pack (and
// recorded every offset it found in a map under a lock), built an object whose
// SHA-1, collision-detecting, was computed again to put it in go-git's cache,
// though the index had just named it, and decoded a tree entry by entry
// through a buffered reader: most of what a fast-forward over a large merge
// cost. Set reads straight from the packs' bytes.
//
// What Set cannot read (an entry that does not parse or inflate, a delta that
// does not apply, a chain deeper than git's or resolving past maxDeltaObject,
// a base by name outside its pack) is an error that says so, never one that
// reads as a missing object: the object was named. Its memory is bounded:
// nothing above the caller's limit (or, for a delta, its base or its
// instructions above maxDeltaObject) is inflated, and resolved commits and
// trees are kept up to packReadCache bytes. Blobs are never kept: vault keeps
// their plaintext, and one large blob would push out every delta base.

// packReadCache bounds the contents Set keeps, whole objects and delta
// bases, so that a chain of deltas is not resolved again from its root for
// each of its objects.
const packReadCache = 16 << 20

// ErrNotInPacks marks an object that no listed pack holds.
var ErrNotInPacks = errors.New("in no pack")

// errClosed marks a read after Close.
var errClosed = errors.New("the pack reader is closed")

// errOtherType marks an object of another type than asked.
var errOtherType = errors.New("of another type")

// Set reads objects from the packs of one repository.
type Set struct {
	dir string // objects/pack

	mu     sync.Mutex
	closed bool
	packs  []*readPack
	listed time.Time // the folder's modification time when the packs were listed
	tried  bool      // the folder was listed at least once
	cache  map[cacheKey]cached
	order  []cacheKey // cache's keys, oldest first
	Held   int64      // bytes in cache
	sc     *Scanner
}

// readPack is one pack that Set reads.
type readPack struct {
	f       *os.File
	idx     *idxfile.MemoryIndex
	end     int64 // where the entries end: the pack's checksum follows
	streams int   // streams open on it (see Open)
	dropped bool  // no longer listed: closed when its last stream is
}

// drop closes p, or, while streams read it, leaves that to the last of them.
func (p *readPack) drop() {
	p.dropped = true
	if p.streams == 0 {
		p.f.Close()
	}
}

type cacheKey struct {
	p   *readPack
	off int64
}

func NewSet(repoDir string) *Set {
	return &Set{dir: filepath.Join(repoDir, "objects", "pack"), cache: map[cacheKey]cached{}}
}

// Close releases the pack files.
func (s *Set) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.packs {
		p.drop()
	}
	s.packs, s.closed = nil, true
	s.clearCache()
}

func (s *Set) clearCache() {
	clear(s.cache)
	s.order = s.order[:0]
	s.Held = 0
}

// Read returns the content of object h when a pack holds it as an object of
// type t of at most limit bytes, for a walk's commits and trees; false leaves
// the read to the caller's lookup, which says why (see Get).
func (s *Set) Read(h Hash, t plumbing.ObjectType, limit int64) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, off, ok := s.locate(h)
	if !ok {
		return nil, false
	}
	_, data, err := s.resolve(p, off, t, limit)
	return data, err == nil
}

// Get reads object h whole when a pack holds it as an object of type t (or
// of any type, for plumbing.AnyObject) of at most limit bytes: its type and
// content. The error wraps ErrNotInPacks when no pack holds h, and
// object.ErrTooLarge when it is larger than limit (nothing of it inflated);
// an object of another type is refused with its type, before anything of it
// is inflated. Any other error is damage (see Set): it wraps neither.
func (s *Set) Get(h Hash, t plumbing.ObjectType, limit int64) (plumbing.ObjectType, []byte, error) {
	if s == nil {
		return 0, nil, ErrNotInPacks
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, off, err := s.where(h)
	if err != nil {
		return 0, nil, err
	}
	typ, data, err := s.resolve(p, off, t, limit)
	return typ, data, s.describe(h, err)
}

// Stat returns the type and size of object h, inflating at most the first
// bytes of a delta's instructions. Its error is Get's.
func (s *Set) Stat(h Hash) (plumbing.ObjectType, int64, error) {
	if s == nil {
		return 0, 0, ErrNotInPacks
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, off, err := s.where(h)
	if err != nil {
		return 0, 0, err
	}
	typ, size, err := s.stat(p, off)
	return typ, size, s.describe(h, err)
}

// where is locate's answer as an error.
func (s *Set) where(h Hash) (*readPack, int64, error) {
	if s.closed {
		return nil, 0, errClosed
	}
	p, off, ok := s.locate(h)
	if !ok {
		return nil, 0, ErrNotInPacks
	}
	return p, off, nil
}

// describe names object h in a damage error of resolve or stat; the
// refusals its caller branches on (over the limit, another type) are kept.
func (s *Set) describe(h Hash, err error) error {
	if err == nil || errors.Is(err, object.ErrTooLarge) || errors.Is(err, errOtherType) {
		return err
	}
	return fmt.Errorf("object %s in a pack cannot be read: %v", h, err)
}

// IsOtherType tells whether err is Get's refusal of an object of another
// type than asked.
func IsOtherType(err error) bool { return errors.Is(err, errOtherType) }

// locate finds the entry of h in the packs.
func (s *Set) locate(h Hash) (*readPack, int64, bool) {
	if s.closed {
		return nil, 0, false
	}
	if p, off, ok := s.find(h); ok {
		return p, off, true
	}
	// A fetch or a packer may have added a pack since: list them again,
	// but only when the folder changed.
	if !s.relist() {
		return nil, 0, false
	}
	return s.find(h)
}

// BlobPrefix returns the first n bytes of blob h (fewer if it is shorter)
// and its size, when a pack holds it whole (ciphertext does not delta),
// inflating no more than n bytes; false leaves it to the ordinary path.
func (s *Set) BlobPrefix(h Hash, n int) ([]byte, int64, bool) {
	if s == nil {
		return nil, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, off, ok := s.locate(h)
	if !ok {
		return nil, 0, false
	}
	e, err := s.head(p, off)
	if err != nil || e.typ != plumbing.BlobObject {
		return nil, 0, false
	}
	data, err := s.inflate(e, min(int64(n), e.size))
	if err != nil {
		return nil, 0, false
	}
	return data, e.size, true
}

// find looks h up in the listed packs' indexes.
func (s *Set) find(h Hash) (*readPack, int64, bool) {
	for _, p := range s.packs {
		if off, ok := indexOffset(p.idx, h); ok {
			return p, off, true
		}
	}
	return nil, 0, false
}

// indexOffset finds h in a pack's index, as idxfile.MemoryIndex.FindOffset
// does, without the reverse map that FindOffset fills on every call.
func indexOffset(idx *idxfile.MemoryIndex, h Hash) (int64, bool) {
	k := idx.FanoutMapping[h[0]]
	if k < 0 || k >= len(idx.Names) || k >= len(idx.Offset32) {
		return 0, false
	}
	names, offs := idx.Names[k], idx.Offset32[k]
	n := min(len(names)/len(h), len(offs)/4)
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(h[:], names[mid*len(h):(mid+1)*len(h)]); {
		case c == 0:
			ofs := binary.BigEndian.Uint32(offs[mid*4:])
			if ofs&(1<<31) == 0 {
				return int64(ofs), true
			}
			at := 8 * uint64(ofs&^(1<<31))
			if l := uint64(len(idx.Offset64)); l < 8 || at > l-8 {
				return 0, false
			}
			o := binary.BigEndian.Uint64(idx.Offset64[at:])
			if o > 1<<62 {
				return 0, false
			}
			return int64(o), true
		case c < 0:
			hi = mid
		default:
			lo = mid + 1
		}
	}
	return 0, false
}

// relist lists the packs again when the folder changed since the last
// listing, keeping the packs still there open, and tells whether it did.
func (s *Set) relist() bool {
	fi, err := os.Stat(s.dir)
	if err != nil {
		return false
	}
	// A folder changed within the clock's granularity of the last listing
	// may change again unseen: such a listing is not trusted as current.
	if s.tried && fi.ModTime().Equal(s.listed) && time.Since(s.listed) > time.Second {
		return false
	}
	names, err := filepath.Glob(filepath.Join(s.dir, "pack-*.idx"))
	if err != nil {
		return false
	}
	s.tried, s.listed = true, fi.ModTime()
	old := map[string]*readPack{}
	for _, p := range s.packs {
		old[strings.TrimSuffix(p.f.Name(), ".pack")] = p
	}
	var packs []*readPack
	for _, name := range names {
		base := strings.TrimSuffix(name, ".idx")
		if p, ok := old[base]; ok {
			packs = append(packs, p)
			delete(old, base)
			continue
		}
		if p, err := openReadPack(base); err == nil {
			packs = append(packs, p)
		}
	}
	for _, p := range old {
		p.drop() // merged away: its cached contents go with it
	}
	if len(old) > 0 {
		s.clearCache()
	}
	s.packs = packs
	return true
}

// openReadPack opens the pack at base (".pack" and ".idx"). The pack is
// opened first: the index read then describes the file held open, even if a
// packer merges it away meanwhile, as git removes the index first.
func openReadPack(base string) (*readPack, error) {
	f, err := os.Open(base + ".pack")
	if err != nil {
		return nil, err
	}
	idx, err := readIndex(base + ".idx")
	if err != nil {
		f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() < 32 {
		f.Close()
		return nil, os.ErrInvalid
	}
	return &readPack{f: f, idx: idx, end: fi.Size() - 20}, nil
}

// chainLink is one entry on the way from an object down to the whole object
// its deltas apply to.
type chainLink struct {
	off  int64 // the entry
	size int64 // its instructions'
}

// cached is a resolved content and the type of its chain's root.
type cached struct {
	data []byte
	t    plumbing.ObjectType
}

// resolve reads the object at off in p, which must be of type want (or any,
// for plumbing.AnyObject) and at most limit bytes: its type and content.
// Commits and trees it resolves are cached, blobs never (see Set).
func (s *Set) resolve(p *readPack, off int64, want plumbing.ObjectType, limit int64) (plumbing.ObjectType, []byte, error) {
	var chain []chainLink
	var base []byte
	var typ plumbing.ObjectType
	for {
		if c, ok := s.cache[cacheKey{p, off}]; ok {
			typ = c.t
			if want != plumbing.AnyObject && typ != want {
				return typ, nil, errOtherType
			}
			if len(chain) == 0 && int64(len(c.data)) > limit {
				return typ, nil, object.ErrTooLarge
			}
			base = c.data
			break
		}
		h, err := s.head(p, off)
		if err != nil {
			return 0, nil, err
		}
		if h.typ == plumbing.OFSDeltaObject || h.typ == plumbing.REFDeltaObject {
			if h.size > maxDeltaObject {
				return 0, nil, fmt.Errorf("entry at %d: delta instructions of %d bytes, past %d", off, h.size, maxDeltaObject)
			}
			if len(chain) >= MaxDeltaDepth {
				return 0, nil, fmt.Errorf("entry at %d: a chain of deltas deeper than %d", off, MaxDeltaDepth)
			}
			chain = append(chain, chainLink{off: off, size: h.size})
			if off, err = s.base(p, h); err != nil {
				return 0, nil, err
			}
			continue
		}
		typ = h.typ
		if want != plumbing.AnyObject && typ != want {
			return typ, nil, errOtherType
		}
		if len(chain) == 0 && h.size > limit {
			return typ, nil, object.ErrTooLarge
		}
		if len(chain) > 0 && h.size > maxDeltaObject {
			return 0, nil, fmt.Errorf("entry at %d: a delta base of %d bytes, past %d", off, h.size, maxDeltaObject)
		}
		data, err := s.inflate(h, h.size)
		if err != nil {
			return 0, nil, err
		}
		s.keep(cacheKey{p, off}, cached{data, typ})
		base = data
		break
	}
	// Apply the deltas, from the one nearest the root up to the object.
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		h, err := s.head(p, l.off)
		if err != nil {
			return 0, nil, err
		}
		delta, err := s.inflate(h, l.size)
		if err != nil {
			return 0, nil, err
		}
		n := deltaTargetSize(delta)
		if i == 0 && n > limit {
			return typ, nil, object.ErrTooLarge
		}
		if n > maxDeltaObject {
			return 0, nil, fmt.Errorf("entry at %d: a delta resolving to %d bytes, past %d", l.off, n, maxDeltaObject)
		}
		out, err := packfile.PatchDelta(base, delta)
		if err != nil {
			return 0, nil, fmt.Errorf("entry at %d: %v", l.off, err)
		}
		s.keep(cacheKey{p, l.off}, cached{out, typ})
		base = out
	}
	return typ, base, nil
}

// base finds the entry of the base of the delta whose header is h.
func (s *Set) base(p *readPack, h EntryHead) (int64, error) {
	if h.typ == plumbing.OFSDeltaObject {
		return h.baseOfs, nil
	}
	// A base named by hash: in a pack git wrote or gitlog indexed, the
	// same pack.
	off, ok := indexOffset(p.idx, h.baseRef)
	if !ok {
		return 0, fmt.Errorf("entry at %d: a delta on %s, which its pack does not hold", h.offset, h.baseRef)
	}
	return off, nil
}

// stat reads the type and size of the object at off in p: a delta's type is
// its chain's root's, its size what its instructions say it makes.
func (s *Set) stat(p *readPack, off int64) (plumbing.ObjectType, int64, error) {
	if c, ok := s.cache[cacheKey{p, off}]; ok {
		return c.t, int64(len(c.data)), nil
	}
	top, err := s.head(p, off)
	if err != nil {
		return 0, 0, err
	}
	if top.typ != plumbing.OFSDeltaObject && top.typ != plumbing.REFDeltaObject {
		return top.typ, top.size, nil
	}
	// Two sizes of at most ten bytes each open the instructions.
	ins, err := s.inflate(top, min(top.size, 20))
	if err != nil {
		return 0, 0, err
	}
	size := deltaTargetSize(ins)
	h := top
	for depth := 0; ; depth++ {
		if depth >= MaxDeltaDepth {
			return 0, 0, fmt.Errorf("entry at %d: a chain of deltas deeper than %d", off, MaxDeltaDepth)
		}
		at, err := s.base(p, h)
		if err != nil {
			return 0, 0, err
		}
		if c, ok := s.cache[cacheKey{p, at}]; ok {
			return c.t, size, nil
		}
		if h, err = s.head(p, at); err != nil {
			return 0, 0, err
		}
		if h.typ != plumbing.OFSDeltaObject && h.typ != plumbing.REFDeltaObject {
			return h.typ, size, nil
		}
	}
}

// head reads the header of the entry at off in p, to inflate its content
// next.
func (s *Set) head(p *readPack, off int64) (EntryHead, error) {
	if off < 12 || off >= p.end {
		return EntryHead{}, fmt.Errorf("an entry at %d, outside the pack's entries", off)
	}
	if s.sc == nil {
		s.sc = NewScanner(nil)
	}
	h, err := s.sc.At(p.f, off)
	if err != nil {
		return h, fmt.Errorf("%v", err) // a read of the held file: never "no such file"
	}
	switch h.typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject,
		plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
		return h, nil
	}
	return h, fmt.Errorf("entry at %d: of type %d, which git does not write", off, h.typ)
}

// inflate reads the first n bytes of the content of the entry whose header
// head just read: no more, whatever the stream holds.
func (s *Set) inflate(h EntryHead, n int64) ([]byte, error) {
	data := make([]byte, n)
	if err := s.sc.readPrefix(data, h); err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	return data, nil
}

// Packed is the content of a commit or tree at off in a pack of this
// repository that was just written or indexed.
type Packed struct {
	Off  int64
	Type plumbing.ObjectType
	Data []byte
}

// Seed caches objs, the contents of commits and trees that the pack at base
// (without ".pack") holds at their offsets, as resolve would have kept them
// on reading them: a flush of the journal writes them from memory, and
// indexing a received pack inflates them, so the next reads of them (a
// push's walk and delta search, the signatures and admission of a fetch, a
// merge base) need not inflate them again. A pack that is not listed is left
// alone.
func (s *Set) Seed(base string, objs []Packed) {
	if s == nil || len(objs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.relist()
	for _, p := range s.packs {
		if p.f.Name() != base+".pack" {
			continue
		}
		for _, o := range objs {
			s.keep(cacheKey{p, o.Off}, cached{o.Data, o.Type})
		}
		return
	}
}

// keep caches a resolved content, dropping the oldest past packReadCache; a
// blob is not kept (see Set).
func (s *Set) keep(k cacheKey, c cached) {
	n := int64(len(c.data))
	if n > packReadCache/8 || c.t == plumbing.BlobObject {
		return
	}
	if _, ok := s.cache[k]; ok {
		return
	}
	for s.Held+n > packReadCache && len(s.order) > 0 {
		old := s.order[0]
		s.order = s.order[1:]
		s.Held -= int64(len(s.cache[old].data))
		delete(s.cache, old)
	}
	s.cache[k] = c
	s.order = append(s.order, k)
	s.Held += n
}

// Cached returns what the reader holds resolved for object h, without reading
// it: what a writer's seeds left there (see Seed).
func (s *Set) Cached(h Hash) (plumbing.ObjectType, []byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.relist()
	p, off, ok := s.find(h)
	if !ok {
		return 0, nil, false
	}
	c, ok := s.cache[cacheKey{p, off}]
	return c.t, c.data, ok
}

// Open opens object h as a stream, whatever its size: its type, its size and
// its content. A whole entry above LargeObject is inflated as it is read,
// through the pack's file, which stays open until the stream is closed even
// if the pack is merged away meanwhile; anything else is read whole first (a
// blob without being cached). Its error is Get's.
func (s *Set) Open(h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	if s == nil {
		return 0, 0, nil, ErrNotInPacks
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, off, err := s.where(h)
	if err != nil {
		return 0, 0, nil, err
	}
	e, err := s.head(p, off)
	if err != nil {
		return 0, 0, nil, s.describe(h, err)
	}
	if (e.typ == plumbing.OFSDeltaObject || e.typ == plumbing.REFDeltaObject) || e.size <= LargeObject {
		typ, data, err := s.resolve(p, off, plumbing.AnyObject, math.MaxInt64)
		if err != nil {
			return 0, 0, nil, s.describe(h, err)
		}
		return typ, int64(len(data)), io.NopCloser(bytes.NewReader(data)), nil
	}
	at := s.sc.Offset() // where the entry's zlib stream starts
	zr, err := zlib.NewReader(bufio.NewReaderSize(io.NewSectionReader(p.f, at, p.end-at), 32<<10))
	if err != nil {
		return 0, 0, nil, s.describe(h, err)
	}
	p.streams++
	return e.typ, e.size, &packStream{s: s, p: p, h: h, zr: zr, left: e.size}, nil
}

// packStream is the content of one whole entry, inflated as it is read, no
// further than its size (see Open).
type packStream struct {
	s    *Set
	p    *readPack
	h    Hash
	zr   io.ReadCloser
	left int64
	done bool
}

func (r *packStream) Read(b []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > r.left {
		b = b[:r.left]
	}
	n, err := r.zr.Read(b)
	r.left -= int64(n)
	if err == io.EOF && r.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("object %s in a pack cannot be read: %v", r.h, err)
	}
	return n, err
}

// Close releases the stream's hold on its pack.
func (r *packStream) Close() error {
	if r.done {
		return nil
	}
	r.done = true
	r.zr.Close()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.p.streams--
	if r.p.dropped && r.p.streams == 0 {
		r.p.f.Close()
	}
	return nil
}
