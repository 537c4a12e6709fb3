package pack

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/memvault/memvault/gitlog/internal/object"
)

// Builder is gitlog's one pack writer. It writes whole objects, streamed
// one at a time so that nothing is held whole, deltas found beforehand (see
// SearchDeltas), and entries copied from other packs, gathered into large
// writes. A pack served to a client goes to any
// writer (newPackEncoder); a pack for this repository goes to a Sink, with
// its index built on the way rather than by reading the pack back (IndexPack,
// which a fetched pack needs), and is installed by finish (newPackBuilder).
type Builder struct {
	w    io.Writer
	sink *Sink // nil for a pack that is only written to w
	sum  hash.Hash
	bw   *bufio.Writer
	iw   idxfile.Writer
	off  int64
	seen map[Hash]bool
	buf  []byte // for copying entries
	name Hash   // the pack's checksum, which names it, once finished
}

// NewEncoder starts a pack of count objects written to w.
func NewEncoder(w io.Writer, count int) *Builder {
	b := &Builder{w: w, sum: sha1.New(), seen: make(map[Hash]bool, count), buf: make([]byte, 64<<10)}
	b.bw = bufio.NewWriterSize(io.MultiWriter(w, b.sum), 256<<10)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(count))
	b.bw.Write(head[:])
	b.off = 12
	b.iw.OnHeader(uint32(count))
	return b
}

// copy appends an entry copied from another pack: head, then what rd holds
// (its zlib stream). The source's bytes, src and then rd's, must match crc, the
// CRC-32 the source pack's index holds for the entry; head is src, or another
// header for the same stream.
func (b *Builder) copy(h Hash, src, head []byte, rd io.Reader, crc uint32) error {
	ew := entryWriter{w: b.bw}
	ew.Write(head)
	cr := &crcReader{rd: rd, crc: crc32.Update(0, crc32.IEEETable, src)}
	if _, err := io.CopyBuffer(&ew, cr, b.buf); err != nil {
		return err
	}
	if cr.crc != crc {
		return fmt.Errorf("the entry of %s does not match its checksum", h)
	}
	b.added(h, ew)
	return nil
}

// crcReader keeps the CRC-32 of what it reads.
type crcReader struct {
	rd  io.Reader
	crc uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.rd.Read(p)
	c.crc = crc32.Update(c.crc, crc32.IEEETable, p[:n])
	return n, err
}

// delta appends object h as the delta d, which names its base.
func (b *Builder) delta(h Hash, d Delta) {
	ew := entryWriter{w: b.bw}
	ew.Write(EntryHeader(plumbing.REFDeltaObject, d.size))
	ew.Write(d.base[:])
	ew.Write(d.zdata)
	b.added(h, ew)
}

// added indexes the entry of h that ew wrote.
func (b *Builder) added(h Hash, ew entryWriter) {
	if b.sink != nil {
		b.iw.Add(gg(h), uint64(b.off), ew.crc)
	}
	b.seen[h] = true
	b.off += ew.n
}

// object appends a whole object, compressed here.
func (b *Builder) object(o rawObject) error {
	return b.stream(o.Hash, o.Type, int64(len(o.Data)), bytes.NewReader(o.Data))
}

// stream appends a whole object of size bytes read from rd, compressed as it
// is read: an object of a fetched pack may be bigger than memory (a delta of a
// few bytes can stand for gigabytes).
func (b *Builder) stream(h Hash, t plumbing.ObjectType, size int64, rd io.Reader) error {
	ew := entryWriter{w: b.bw}
	ew.Write(EntryHeader(t, size))
	pool := &object.Writers
	if t == plumbing.BlobObject {
		pool = &object.Stored
	}
	zw := pool.Get().(*zlib.Writer)
	defer pool.Put(zw)
	zw.Reset(&ew)
	if _, err := io.CopyN(zw, rd, size); err != nil {
		return fmt.Errorf("%s: %w", h, err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	b.added(h, ew)
	return nil
}

// entryWriter passes a pack entry's bytes on, counting them and keeping their
// CRC-32 for the index.
type entryWriter struct {
	w   io.Writer
	crc uint32
	n   int64
}

func (e *entryWriter) Write(p []byte) (int, error) {
	e.crc = crc32.Update(e.crc, crc32.IEEETable, p)
	e.n += int64(len(p))
	return e.w.Write(p)
}

// Trailer writes what is buffered and then the pack's checksum, and returns it.
func (b *Builder) Trailer() (Hash, error) {
	var sum Hash
	if err := b.bw.Flush(); err != nil {
		return sum, err
	}
	copy(sum[:], b.sum.Sum(nil))
	_, err := b.w.Write(sum[:])
	return sum, err
}

// finish writes the checksum and installs the pack with its index.
func (b *Builder) finish() error {
	if len(b.seen) == 0 {
		b.sink.Abort()
		return nil
	}
	sum, err := b.Trailer()
	if err != nil {
		b.sink.Abort()
		return err
	}
	b.name = sum
	if err := b.iw.OnFooter(gg(sum)); err != nil {
		b.sink.Abort()
		return err
	}
	idx, err := b.iw.Index()
	if err != nil {
		b.sink.Abort()
		return err
	}
	return b.sink.closeIndexed(idx, sum)
}

// EntryHeader is a pack entry's type and size: 3 bits and 4 bits in the first
// byte, then 7 bits a byte, each but the last with its high bit set.
func EntryHeader(t plumbing.ObjectType, size int64) []byte {
	var hdr [16]byte
	n := 0
	c := byte(t)<<4 | byte(size&0x0f)
	for size >>= 4; size > 0; size >>= 7 {
		hdr[n] = c | 0x80
		n++
		c = byte(size & 0x7f)
	}
	hdr[n] = c
	return hdr[:n+1]
}

// PackEntry is where an object's entry stands in a pack, and the CRC-32 of its
// bytes that the pack's index holds.
type PackEntry struct {
	hash     Hash
	off, end int64
	crc      uint32
}

// mergeEntry is an entry of an input pack that the merged pack takes, with
// what its header says.
type mergeEntry struct {
	PackEntry
	Pack int                 // which input pack
	typ  plumbing.ObjectType // as stored: a delta is OFS or REF
	size int64               // as stored: a delta's is the delta's
	head int                 // bytes of header before the zlib stream
	base Hash                // a delta's base
}

func (e *mergeEntry) isDelta() bool {
	return e.typ == plumbing.OFSDeltaObject || e.typ == plumbing.REFDeltaObject
}

// OpenFunc opens object h, of type t or any: its type, its size and its
// content.
type OpenFunc func(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error)

// packMerge is the work of Merge.
type packMerge struct {
	open    OpenFunc // reads an object the merge cannot copy
	files   []*os.File
	entries []mergeEntry
	at      map[Hash]int // index in entries
	starts  []int        // where each pack's entries start in entries, and their end
	sc      *Scanner     // reads the entries
}

func (m *packMerge) close() {
	for _, f := range m.files {
		f.Close()
	}
}

// plan lists the entries the merged pack takes, each object once, and reads
// their headers.
func (m *packMerge) plan(packs []File) error {
	m.at = map[Hash]int{}
	defer func() { m.starts = append(m.starts, len(m.entries)) }()
	for i, p := range packs {
		m.starts = append(m.starts, len(m.entries))
		es, err := packEntries(p)
		if err != nil {
			return err
		}
		f, err := os.Open(p.Base + ".pack")
		if err != nil {
			return err
		}
		m.files = append(m.files, f)
		for _, e := range es {
			if _, ok := m.at[e.hash]; ok {
				continue
			}
			if e.end <= e.off {
				return fmt.Errorf("%s: an entry of %s at %d of %d bytes", p.Base, e.hash, e.off, e.end-e.off)
			}
			h, err := m.sc.At(f, e.off)
			if err != nil {
				return fmt.Errorf("%s: the entry of %s: %w", p.Base, e.hash, err)
			}
			me := mergeEntry{PackEntry: e, Pack: i, typ: h.typ, size: h.size, head: int(m.sc.Offset() - e.off), base: h.baseRef}
			if me.typ == plumbing.OFSDeltaObject {
				k := sort.Search(len(es), func(k int) bool { return es[k].off >= h.baseOfs })
				if k == len(es) || es[k].off != h.baseOfs {
					return fmt.Errorf("%s: the entry of %s has no base at %d", p.Base, e.hash, h.baseOfs)
				}
				me.base = es[k].hash
			}
			m.at[e.hash] = len(m.entries)
			m.entries = append(m.entries, me)
		}
	}
	return nil
}

// candidates lists the entries that may become deltas, each with the height
// of the chains of deltas already based on it: a new delta must not make one
// of them deeper than maxDepth.
func (m *packMerge) candidates(maxDepth int) []DeltaCand {
	height := map[Hash]int{}
	depth := map[Hash]int{}
	for _, e := range m.entries {
		if !e.isDelta() {
			continue
		}
		// Up the chain to a whole object or one whose depth is known.
		var path []Hash
		h, d := e.hash, 0
		for steps := 0; ; steps++ {
			if known, ok := depth[h]; ok {
				d = known
				break
			}
			k, ok := m.at[h]
			if !ok || !m.entries[k].isDelta() || steps > len(m.entries) {
				d = 0 // a whole object (a missing base fails when read)
				break
			}
			path = append(path, h)
			h = m.entries[k].base
		}
		root := h
		if k, ok := m.at[h]; ok && m.entries[k].isDelta() {
			root = m.rootOf(h)
		}
		for i := len(path) - 1; i >= 0; i-- {
			d++
			depth[path[i]] = d
		}
		if d > height[root] {
			height[root] = d
		}
	}
	var cands []DeltaCand
	prefix := make([]byte, NameHashPrefix)
	for i, e := range m.entries {
		if e.isDelta() || !MayDelta(e.typ, e.size) {
			continue
		}
		var name uint32
		if e.typ == plumbing.TreeObject { // the others have no name to read
			n := min(int64(len(prefix)), e.size)
			if err := m.inflate(&e, prefix[:n]); err != nil {
				continue // stays whole; a damaged entry fails its checksum when copied
			}
			name = NameHash(e.typ, prefix[:n])
		}
		cands = append(cands, DeltaCand{hash: e.hash, typ: e.typ, size: e.size, name: name, order: m.recency(i), height: height[e.hash]})
	}
	return cands
}

// recency ranks entry i, the newest 0: the packs come newest first (the
// smallest, as consolidate and Pack list them), and each holds its objects
// in the order they were made (see journal.Index.snapshot).
func (m *packMerge) recency(i int) int {
	p := m.entries[i].Pack
	return m.starts[p] + m.starts[p+1] - 1 - i
}

// rootOf is the whole object at the end of h's chain of deltas.
func (m *packMerge) rootOf(h Hash) Hash {
	for range len(m.entries) + 1 {
		k, ok := m.at[h]
		if !ok || !m.entries[k].isDelta() {
			return h
		}
		h = m.entries[k].base
	}
	return h
}

// inflate reads the first len(p) bytes of what entry e holds.
func (m *packMerge) inflate(e *mergeEntry, p []byte) error {
	h, err := m.sc.At(m.files[e.Pack], e.off)
	if err != nil {
		return err
	}
	return m.sc.readPrefix(p, h)
}

// load reads a whole object that may become a delta.
func (m *packMerge) load(h Hash) ([]byte, error) {
	e := &m.entries[m.at[h]]
	data := make([]byte, e.size)
	if err := m.inflate(e, data); err != nil {
		return nil, fmt.Errorf("read %s: %w", h, err)
	}
	return data, nil
}

// write appends the entries to b: the deltas found, and the rest copied.
func (m *packMerge) write(b *Builder, found DeltaSearch) error {
	head := make([]byte, 64)
	for _, e := range m.entries {
		if d, ok := found.Deltas[e.hash]; ok {
			b.delta(e.hash, d)
			continue
		}
		if _, ok := m.at[e.base]; e.isDelta() && !ok {
			// A base outside the pack (git never writes one, a thin pack
			// has them): the object is resolved, as a stream, and written
			// whole.
			t, size, rd, err := m.open(plumbing.AnyObject, e.hash)
			if err != nil {
				return err
			}
			err = b.stream(e.hash, t, size, rd)
			rd.Close()
			if err != nil {
				return err
			}
			continue
		}
		f := m.files[e.Pack]
		src := head[:e.head]
		if _, err := f.ReadAt(src, e.off); err != nil {
			return err
		}
		dst := src
		if e.typ == plumbing.OFSDeltaObject {
			dst = append(EntryHeader(plumbing.REFDeltaObject, e.size), e.base[:]...)
		}
		rest := io.NewSectionReader(f, e.off+int64(e.head), e.end-e.off-int64(e.head))
		if err := b.copy(e.hash, src, dst, rest, e.crc); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	return nil
}

// parseEntryHead reads the header of a pack entry: its type and size, and for
// a delta its base (a distance back, or a name), and how many bytes that took.
func parseEntryHead(b []byte) (t plumbing.ObjectType, size, ofs int64, ref Hash, n int, err error) {
	short := fmt.Errorf("a header cut short")
	if len(b) == 0 {
		return 0, 0, 0, ref, 0, short
	}
	c := b[0]
	t = plumbing.ObjectType(c >> 4 & 7)
	size = int64(c & 0x0f)
	shift := 4
	n = 1
	for c&0x80 != 0 {
		if n >= len(b) || shift > 56 {
			return 0, 0, 0, ref, 0, short
		}
		c = b[n]
		n++
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	switch t {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		if n >= len(b) {
			return 0, 0, 0, ref, 0, short
		}
		c = b[n]
		n++
		ofs = int64(c & 0x7f)
		for c&0x80 != 0 {
			if n >= len(b) || ofs > 1<<55 {
				return 0, 0, 0, ref, 0, short
			}
			c = b[n]
			n++
			ofs = (ofs+1)<<7 | int64(c&0x7f)
		}
	case plumbing.REFDeltaObject:
		if n+len(ref) > len(b) {
			return 0, 0, 0, ref, 0, short
		}
		copy(ref[:], b[n:])
		n += len(ref)
	default:
		return 0, 0, 0, ref, 0, fmt.Errorf("an entry of unknown type %d", t)
	}
	return t, size, ofs, ref, n, nil
}

// packEntries lists the entries of pack p in the order they stand in it.
func packEntries(p File) ([]PackEntry, error) {
	idx, err := readIndex(p.Base + ".idx")
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p.Base + ".pack")
	if err != nil {
		return nil, err
	}
	iter, err := idx.Entries()
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	var es []PackEntry
	for {
		e, err := iter.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		es = append(es, PackEntry{hash: fromGG(e.Hash), off: int64(e.Offset), crc: e.CRC32})
	}
	sort.Slice(es, func(a, b int) bool { return es[a].off < es[b].off })
	for k := range es {
		es[k].end = fi.Size() - 20 // the pack's checksum follows the last entry
		if k+1 < len(es) {
			es[k].end = es[k+1].off
		}
	}
	return es, nil
}

// readIndex reads a pack index.
func readIndex(name string) (*idxfile.MemoryIndex, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return idx, nil
}
