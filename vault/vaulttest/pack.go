package vaulttest

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/memvault/memvault/gitlog"
)

// packWriter writes a git pack (version 2, whole objects, no deltas) and its
// index, far faster than writing loose objects one file at a time.
type packWriter struct {
	dir     string // the repository's objects/pack
	f       *os.File
	w       *bufio.Writer
	sum     hash.Hash // of everything written to the pack
	off     int64
	zw      *zlib.Writer
	entries []packEntry
}

type packEntry struct {
	hash gitlog.Hash
	off  int64
	crc  uint32
}

// newPackWriter starts a pack of exactly count objects in repo's objects/pack.
func newPackWriter(repo string, count int) (*packWriter, error) {
	dir := filepath.Join(repo, "objects", "pack")
	f, err := os.CreateTemp(dir, "tmp-pack-")
	if err != nil {
		return nil, err
	}
	p := &packWriter{dir: dir, f: f, w: bufio.NewWriterSize(f, 1<<20), sum: sha1.New()}
	p.zw, _ = zlib.NewWriterLevel(nil, zlib.BestSpeed)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(count))
	p.write(head[:])
	return p, nil
}

func (p *packWriter) write(b []byte) {
	p.w.Write(b)
	p.sum.Write(b)
	p.off += int64(len(b))
}

// The types of git objects, as a pack's object headers number them.
type objType byte

const (
	objCommit objType = 1
	objTree   objType = 2
	objBlob   objType = 3
)

var objTypeName = map[objType]string{objCommit: "commit", objTree: "tree", objBlob: "blob"}

// add writes one object and returns its name.
func (p *packWriter) add(t objType, data []byte) gitlog.Hash {
	hw := sha1.New()
	fmt.Fprintf(hw, "%s %d\x00", objTypeName[t], len(data))
	hw.Write(data)
	var h gitlog.Hash
	hw.Sum(h[:0])
	var hdr []byte
	size := len(data)
	c := byte(t)<<4 | byte(size&0x0f)
	for size >>= 4; size > 0; size >>= 7 {
		hdr = append(hdr, c|0x80)
		c = byte(size & 0x7f)
	}
	hdr = append(hdr, c)
	crc := crc32.NewIEEE()
	out := io.MultiWriter(crc, writerFunc(p.write))
	out.Write(hdr)
	start := p.off
	p.zw.Reset(out)
	p.zw.Write(data)
	p.zw.Close()
	p.entries = append(p.entries, packEntry{hash: h, off: start - int64(len(hdr)), crc: crc.Sum32()})
	return h
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// finish writes the pack's checksum and its index, syncs both and puts them in
// place.
func (p *packWriter) finish(count int) error {
	if len(p.entries) != count {
		return fmt.Errorf("pack: %d objects written, %d announced", len(p.entries), count)
	}
	packSum := p.sum.Sum(nil)
	p.w.Write(packSum)
	err := p.w.Flush()
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	name := filepath.Join(p.dir, "pack-"+hex.EncodeToString(packSum))
	if err := os.WriteFile(name+".idx", p.index(packSum), 0o444); err != nil {
		return err
	}
	return os.Rename(p.f.Name(), name+".pack")
}

// index encodes the pack's .idx, version 2.
func (p *packWriter) index(packSum []byte) []byte {
	es := p.entries
	sort.Slice(es, func(i, j int) bool { return string(es[i].hash[:]) < string(es[j].hash[:]) })
	var b []byte
	b = append(b, 0xff, 't', 'O', 'c', 0, 0, 0, 2)
	var fan [256]uint32
	for _, e := range es {
		fan[e.hash[0]]++
	}
	for i, n := 0, uint32(0); i < 256; i++ {
		n += fan[i]
		b = binary.BigEndian.AppendUint32(b, n)
	}
	for _, e := range es {
		b = append(b, e.hash[:]...)
	}
	for _, e := range es {
		b = binary.BigEndian.AppendUint32(b, e.crc)
	}
	for _, e := range es {
		b = binary.BigEndian.AppendUint32(b, uint32(e.off))
	}
	b = append(b, packSum...)
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}
