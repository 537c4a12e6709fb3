package gitlog

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packBuilder is gitlog's one pack writer. It writes whole objects only, no
// deltas (ciphertext does not delta, and searching costs more than the bytes
// it would save on trees), streamed one at a time so that nothing is held
// whole, and gathered into large writes. A pack served to a client goes to any
// writer (newPackEncoder); a pack for this repository goes to a packSink, with
// its index built on the way rather than by reading the pack back (indexPack,
// which a fetched pack needs), and is installed by finish (newPackBuilder).
type packBuilder struct {
	w    io.Writer
	sink *packSink // nil for a pack that is only written to w
	sum  hash.Hash
	bw   *bufio.Writer
	iw   idxfile.Writer
	off  int64
	seen map[Hash]bool
	buf  []byte // for copying entries
	name Hash   // the pack's checksum, which names it, once finished
}

// newPackEncoder starts a pack of count objects written to w.
func newPackEncoder(w io.Writer, count int) *packBuilder {
	b := &packBuilder{w: w, sum: sha1.New(), seen: make(map[Hash]bool, count), buf: make([]byte, 64<<10)}
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

// newPackBuilder starts a pack of count objects for this repository.
func (r *Repo) newPackBuilder(ctx context.Context, count int) (*packBuilder, error) {
	sink, err := r.newPackSink(ctx)
	if err != nil {
		return nil, err
	}
	b := newPackEncoder(contextWriter{ctx, sink}, count)
	b.sink = sink
	return b, nil
}

// copy appends an entry copied as it is, head and then what rd holds: its
// header and zlib stream, which must match crc, the CRC-32 the source pack's
// index holds for it.
func (b *packBuilder) copy(h Hash, head []byte, rd io.Reader, crc uint32) error {
	ew := entryWriter{w: b.bw}
	ew.Write(head)
	if _, err := io.CopyBuffer(&ew, rd, b.buf); err != nil {
		return err
	}
	if ew.crc != crc {
		return fmt.Errorf("the entry of %s does not match its checksum", h)
	}
	b.added(h, ew)
	return nil
}

// added indexes the entry of h that ew wrote.
func (b *packBuilder) added(h Hash, ew entryWriter) {
	if b.sink != nil {
		b.iw.Add(gg(h), uint64(b.off), ew.crc)
	}
	b.seen[h] = true
	b.off += ew.n
}

// object appends a whole object, compressed here.
func (b *packBuilder) object(o rawObject) error {
	return b.stream(o.hash, o.typ, int64(len(o.data)), bytes.NewReader(o.data))
}

// stream appends a whole object of size bytes read from rd, compressed as it
// is read: an object of a fetched pack may be bigger than memory (a delta of a
// few bytes can stand for gigabytes).
func (b *packBuilder) stream(h Hash, t plumbing.ObjectType, size int64, rd io.Reader) error {
	ew := entryWriter{w: b.bw}
	ew.Write(entryHeader(t, size))
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
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

// trailer writes what is buffered and then the pack's checksum, and returns it.
func (b *packBuilder) trailer() (Hash, error) {
	var sum Hash
	if err := b.bw.Flush(); err != nil {
		return sum, err
	}
	copy(sum[:], b.sum.Sum(nil))
	_, err := b.w.Write(sum[:])
	return sum, err
}

// finish writes the checksum and installs the pack with its index.
func (b *packBuilder) finish() error {
	if len(b.seen) == 0 {
		b.sink.abort()
		return nil
	}
	sum, err := b.trailer()
	if err != nil {
		b.sink.abort()
		return err
	}
	b.name = sum
	if err := b.iw.OnFooter(gg(sum)); err != nil {
		b.sink.abort()
		return err
	}
	idx, err := b.iw.Index()
	if err != nil {
		b.sink.abort()
		return err
	}
	return b.sink.closeIndexed(idx, sum)
}

// entryHeader is a pack entry's type and size: 3 bits and 4 bits in the first
// byte, then 7 bits a byte, each but the last with its high bit set.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
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

// packObjects writes objs, once each, as one new pack.
func (r *Repo) packObjects(ctx context.Context, objs []rawObject) error {
	if len(objs) == 0 {
		return nil
	}
	n := 0
	seen := make(map[Hash]bool, len(objs))
	for _, o := range objs {
		if !seen[o.hash] {
			seen[o.hash] = true
			n++
		}
	}
	b, err := r.newPackBuilder(ctx, n)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if b.seen[o.hash] {
			continue
		}
		if err := b.object(o); err != nil {
			b.sink.abort()
			return fmt.Errorf("gitlog: pack: %w", err)
		}
	}
	return b.finish()
}

// mergePacks writes the objects of packs as one new pack and returns its path
// without ".pack". That may be the path of one of packs: a pack's name is its
// checksum, and merging a pack with others whose objects it holds already
// writes it again, byte for byte. A whole object's
// entry is copied as it is, checked against the CRC-32 its index holds: no
// inflating, no compressing, so merging a big pack costs little more than
// copying its bytes. A delta (in a fetched pack) is resolved and written whole,
// streamed.
func (r *Repo) mergePacks(ctx context.Context, packs []packFile) (string, error) {
	lists := make([][]packEntry, len(packs))
	unique := map[Hash]bool{}
	for i, p := range packs {
		es, err := packEntries(p)
		if err != nil {
			return "", err
		}
		for _, e := range es {
			unique[e.hash] = true
		}
		lists[i] = es
	}
	b, err := r.newPackBuilder(ctx, len(unique))
	if err != nil {
		return "", err
	}
	for i, p := range packs {
		if err := r.copyEntries(b, p, lists[i]); err != nil {
			b.sink.abort()
			return "", fmt.Errorf("gitlog: pack: %w", err)
		}
	}
	if err := b.finish(); err != nil {
		return "", err
	}
	return filepath.Join(r.dir, "objects", "pack", "pack-"+b.name.String()), nil
}

// packEntry is where an object's entry stands in a pack, and the CRC-32 of its
// bytes that the pack's index holds.
type packEntry struct {
	hash     Hash
	off, end int64
	crc      uint32
}

// packEntries lists the entries of pack p in the order they stand in it.
func packEntries(p packFile) ([]packEntry, error) {
	idx, err := readIndex(p.base + ".idx")
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p.base + ".pack")
	if err != nil {
		return nil, err
	}
	iter, err := idx.Entries()
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	var es []packEntry
	for {
		e, err := iter.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		es = append(es, packEntry{hash: fromGG(e.Hash), off: int64(e.Offset), crc: e.CRC32})
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

// copyEntries appends to b the objects of pack p, listed in es, that b does not
// hold yet.
func (r *Repo) copyEntries(b *packBuilder, p packFile, es []packEntry) error {
	f, err := os.Open(p.base + ".pack")
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 4<<10) // most entries whole, read at once
	for _, e := range es {
		if b.seen[e.hash] {
			continue
		}
		if e.end <= e.off {
			return fmt.Errorf("%s: an entry of %s at %d of %d bytes", p.base, e.hash, e.off, e.end-e.off)
		}
		n := min(e.end-e.off, int64(len(head)))
		if _, err := f.ReadAt(head[:n], e.off); err != nil {
			return err
		}
		if t := plumbing.ObjectType(head[0] >> 4 & 7); t != plumbing.OFSDeltaObject && t != plumbing.REFDeltaObject {
			rest := io.NewSectionReader(f, e.off+n, e.end-e.off-n)
			if err := b.copy(e.hash, head[:n], rest, e.crc); err != nil {
				return fmt.Errorf("%s: %w", p.base, err)
			}
			continue
		}
		t, size, rd, err := r.openObject(plumbing.AnyObject, e.hash)
		if err != nil {
			return err
		}
		err = b.stream(e.hash, t, size, rd)
		rd.Close()
		if err != nil {
			return err
		}
	}
	return nil
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
