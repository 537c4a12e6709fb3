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
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packBuilder writes a pack whose objects it knows as it writes them, so the
// index is built on the way, not by reading the whole pack back (indexPack,
// which a fetched pack needs): the objects come from the journal or from this
// repository's own packs. Whole objects only, no deltas.
type packBuilder struct {
	sink *packSink
	sum  hash.Hash
	bw   *bufio.Writer
	iw   idxfile.Writer
	off  int64
	seen map[Hash]bool
	zbuf bytes.Buffer
}

func (r *Repo) newPackBuilder(ctx context.Context, count int) (*packBuilder, error) {
	sink, err := r.newPackSink()
	if err != nil {
		return nil, err
	}
	b := &packBuilder{sink: sink, sum: sha1.New(), seen: make(map[Hash]bool, count)}
	b.bw = bufio.NewWriterSize(io.MultiWriter(contextWriter{ctx, sink}, b.sum), 256<<10)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(count))
	b.bw.Write(head[:])
	b.off = 12
	b.iw.OnHeader(uint32(count))
	return b, nil
}

// raw appends an entry as it is: its header and zlib stream, with its CRC-32.
func (b *packBuilder) raw(h Hash, entry []byte, crc uint32) error {
	if _, err := b.bw.Write(entry); err != nil {
		return err
	}
	b.iw.Add(h, uint64(b.off), crc)
	b.seen[h] = true
	b.off += int64(len(entry))
	return nil
}

// object appends a whole object, compressed here.
func (b *packBuilder) object(o rawObject) error {
	b.zbuf.Reset()
	b.zbuf.Write(entryHeader(o.typ, int64(len(o.data))))
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&b.zbuf)
	zw.Write(o.data)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return err
	}
	return b.raw(o.hash, b.zbuf.Bytes(), crc32.ChecksumIEEE(b.zbuf.Bytes()))
}

// finish writes the checksum and installs the pack with its index.
func (b *packBuilder) finish() error {
	if len(b.seen) == 0 {
		b.sink.abort()
		return nil
	}
	if err := b.bw.Flush(); err != nil {
		b.sink.abort()
		return err
	}
	var sum Hash
	copy(sum[:], b.sum.Sum(nil))
	if _, err := b.sink.Write(sum[:]); err != nil {
		b.sink.abort()
		return err
	}
	if err := b.iw.OnFooter(sum); err != nil {
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

// mergePacks writes the objects of packs as one new pack. A whole object's
// entry is copied as it is, checked against the CRC-32 its index holds: no
// inflating, no compressing, so merging a big pack costs little more than
// copying its bytes. A delta (in a fetched pack) is read whole and written whole.
func (r *Repo) mergePacks(ctx context.Context, packs []packFile) error {
	type entry struct {
		hash     Hash
		off, end int64
		crc      uint32
	}
	lists := make([][]entry, len(packs))
	unique := map[Hash]bool{}
	for i, p := range packs {
		idx, err := readIndex(p.base + ".idx")
		if err != nil {
			return err
		}
		fi, err := os.Stat(p.base + ".pack")
		if err != nil {
			return err
		}
		iter, err := idx.Entries()
		if err != nil {
			return err
		}
		var es []entry
		for {
			e, err := iter.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				iter.Close()
				return err
			}
			es = append(es, entry{hash: e.Hash, off: int64(e.Offset), crc: e.CRC32})
		}
		iter.Close()
		sort.Slice(es, func(a, b int) bool { return es[a].off < es[b].off })
		for k := range es {
			if k+1 < len(es) {
				es[k].end = es[k+1].off
			} else {
				es[k].end = fi.Size() - 20
			}
			unique[es[k].hash] = true
		}
		lists[i] = es
	}
	b, err := r.newPackBuilder(ctx, len(unique))
	if err != nil {
		return err
	}
	fail := func(err error) error {
		b.sink.abort()
		return fmt.Errorf("gitlog: pack: %w", err)
	}
	var buf []byte
	for i, p := range packs {
		f, err := os.Open(p.base + ".pack")
		if err != nil {
			return fail(err)
		}
		for _, e := range lists[i] {
			if b.seen[e.hash] {
				continue
			}
			if e.end <= e.off || e.end-e.off > 1<<31 {
				f.Close()
				return fail(fmt.Errorf("%s: an entry at %d of %d bytes", p.base, e.off, e.end-e.off))
			}
			if n := int(e.end - e.off); cap(buf) < n {
				buf = make([]byte, n)
			} else {
				buf = buf[:n]
			}
			if _, err := f.ReadAt(buf, e.off); err != nil {
				f.Close()
				return fail(err)
			}
			if crc32.ChecksumIEEE(buf) != e.crc {
				f.Close()
				return fail(fmt.Errorf("%s: the entry of %s does not match its checksum", p.base, e.hash))
			}
			if t := plumbing.ObjectType(buf[0] >> 4 & 7); t == plumbing.OFSDeltaObject || t == plumbing.REFDeltaObject {
				o, err := r.object(plumbing.AnyObject, e.hash)
				if err == nil {
					var data []byte
					if data, err = readAll(o); err == nil {
						err = b.object(rawObject{typ: o.Type(), hash: e.hash, data: data})
					}
				}
				if err != nil {
					f.Close()
					return fail(err)
				}
				continue
			}
			if err := b.raw(e.hash, buf, e.crc); err != nil {
				f.Close()
				return fail(err)
			}
		}
		f.Close()
	}
	return b.finish()
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
