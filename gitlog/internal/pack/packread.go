package pack

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// A walk over history (admission of what a fetch brought, the local-path
// server choosing what to send) reads thousands of commits and trees. Through
// go-git's object storage each read looked the object up pack by pack (and
// recorded every offset it found in a map under a lock), built an object whose
// SHA-1, collision-detecting, was computed again to put it in go-git's cache,
// though the index had just named it, and decoded a tree entry by entry
// through a buffered reader: most of what a fast-forward over a large merge
// cost. Set reads commits and trees straight from the packs' bytes.
//
// It only ever takes the ordinary path: an object in no pack it lists, of
// another type, larger than asked, stored in a form it does not expect, or
// whose bytes fail to inflate or apply, is left to go-git's storage (the
// caller's fallback), which then fails or refuses it exactly as before. So a
// damaged or hostile pack is refused the same way, and what Set returns
// is what go-git would have read. Its memory is bounded: nothing above the
// caller's limit (or, for a delta, its base or its instructions above
// maxDeltaObject) is inflated, and resolved contents are kept up to
// packReadCache bytes.

// packReadCache bounds the contents Set keeps, whole objects and delta
// bases, so that a chain of deltas is not resolved again from its root for
// each of its objects.
const packReadCache = 16 << 20

// maxReadPacks bounds the packs a Set keeps open: a vault holds ten at
// most (see consolidate).
const maxReadPacks = 2 * openPacks

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
	f   *os.File
	idx *idxfile.MemoryIndex
	end int64 // where the entries end: the pack's checksum follows
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
		p.f.Close()
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
// type t of at most limit bytes; false leaves the Read to the caller's
// ordinary path (see above).
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
	return s.resolve(p, off, t, limit)
}

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
	e, ok := s.head(p, off)
	if !ok || e.typ != plumbing.BlobObject {
		return nil, 0, false
	}
	data, ok := s.inflate(e, min(int64(n), e.size))
	if !ok {
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
	if len(names) > maxReadPacks {
		// Many packs (a repository git packed now and then, never
		// merged): Set keeps every pack it reads open, so this is
		// left to go-git's storage, which keeps openPacks open.
		names = nil
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
		p.f.Close() // merged away: its cached contents go with it
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

// resolve reads the object at off in p, which must be of type want and at
// most limit bytes: its content, or false when it is left to the ordinary
// path.
func (s *Set) resolve(p *readPack, off int64, want plumbing.ObjectType, limit int64) ([]byte, bool) {
	var chain []chainLink
	var base []byte
	for {
		if c, ok := s.cache[cacheKey{p, off}]; ok {
			if c.t != want || len(chain) == 0 && int64(len(c.data)) > limit {
				return nil, false
			}
			base = c.data
			break
		}
		h, ok := s.head(p, off)
		if !ok {
			return nil, false
		}
		if h.typ == plumbing.OFSDeltaObject || h.typ == plumbing.REFDeltaObject {
			if h.size > maxDeltaObject || len(chain) >= MaxDeltaDepth {
				return nil, false
			}
			chain = append(chain, chainLink{off: off, size: h.size})
			if h.typ == plumbing.OFSDeltaObject {
				off = h.baseOfs
				continue
			}
			// A base named by hash: in a pack git wrote or gitlog
			// indexed, the same pack.
			if off, ok = indexOffset(p.idx, h.baseRef); !ok {
				return nil, false
			}
			continue
		}
		if h.typ != want || h.size > limit || len(chain) > 0 && h.size > maxDeltaObject {
			return nil, false
		}
		data, ok := s.inflate(h, h.size)
		if !ok {
			return nil, false
		}
		s.keep(cacheKey{p, off}, cached{data, h.typ})
		base = data
		break
	}
	// Apply the deltas, from the one nearest the root up to the object.
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		h, ok := s.head(p, l.off)
		if !ok {
			return nil, false
		}
		delta, ok := s.inflate(h, l.size)
		if !ok {
			return nil, false
		}
		if n := deltaTargetSize(delta); n > maxDeltaObject || i == 0 && n > limit {
			return nil, false
		}
		out, err := packfile.PatchDelta(base, delta)
		if err != nil {
			return nil, false
		}
		s.keep(cacheKey{p, l.off}, cached{out, want})
		base = out
	}
	return base, true
}

// head reads the header of the entry at off in p, to inflate its content
// next.
func (s *Set) head(p *readPack, off int64) (EntryHead, bool) {
	if off < 12 || off >= p.end {
		return EntryHead{}, false
	}
	if s.sc == nil {
		s.sc = NewScanner(nil)
	}
	h, err := s.sc.At(p.f, off)
	return h, err == nil
}

// inflate reads the first n bytes of the content of the entry whose header
// head just read: no more, whatever the stream holds.
func (s *Set) inflate(h EntryHead, n int64) ([]byte, bool) {
	data := make([]byte, n)
	if err := s.sc.readPrefix(data, h); err != nil {
		return nil, false
	}
	return data, true
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

// keep caches a resolved content, dropping the oldest past packReadCache.
func (s *Set) keep(k cacheKey, c cached) {
	n := int64(len(c.data))
	if n > packReadCache/8 {
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
