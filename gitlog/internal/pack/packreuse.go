package pack

import (
	"crypto/sha1"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/object"
)

// A pack sent to another repository holds objects this one has packed
// already, most of them compressed and many of them stored as deltas. Read
// through the object storage, each was inflated (a delta resolved) only to be
// compressed again: most of what a push or a fetch from a local path cost.
// As git's pack-objects does, Reuse copies such an entry as it stands:
// its zlib stream is checked against the CRC-32 of the pack's index as it is
// copied, never inflated. A delta keeps its form only when its base is sent
// too, from the same pack, so the pack sent is never thin (gitlog's IndexPack
// refuses thin packs) and its deltas cannot name each other (they follow the
// chains of one pack, which its indexing found free of loops); else the object
// is read and sent whole, as are objects in no pack (the journal's, loose
// ones, a pack made after the listing).

// ReuseShare: a send reuses packed entries when it holds at least
// 1/ReuseShare of the objects in the repository's packs (see OpenReuse).
const ReuseShare = 64

// Reuse is where the objects to send stand in a repository's packs.
type Reuse struct {
	Files   []*os.File
	entries [][]PackEntry       // each pack's, by offset
	at      map[Hash]reuseEntry // the objects to send that a pack holds
	Copied  int                 // the entries writePack copied as stored

	// Cached, when set, is where load first looks for the content of an
	// entry stored whole: a reader that keeps what it resolved (Set),
	// so a tree the walk for what to send has just Cached is not inflated
	// again for the delta search.
	Cached func(h Hash, t plumbing.ObjectType, limit int64) ([]byte, bool)
}

// reuseEntry is an entry of one of Reuse's packs.
type reuseEntry struct {
	pack, k int // packReuse.entries[pack][k]
}

// OpenReuse lists where the objects hs stand in the packs of the repository
// at dir. A pack that cannot be read is left out: its objects are then read
// through the storage. It never fails; close releases its files.
//
// Listing reads every entry of every pack's index: a send much smaller than
// the repository (a commit or a few, pushed from a long history) would pay
// more for the listing than it saves, and so reuses nothing.
func OpenReuse(dir string, hs []Hash) *Reuse {
	u := &Reuse{at: make(map[Hash]reuseEntry, len(hs))}
	names, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if len(names) == 0 || len(hs) == 0 {
		return u
	}
	var total int64
	for _, name := range names {
		n, _ := packCount(name)
		total += int64(n)
	}
	if int64(len(hs))*ReuseShare < total {
		return u
	}
	want := make(map[Hash]bool, len(hs))
	for _, h := range hs {
		want[h] = true
	}
	for _, name := range names {
		p := File{Base: strings.TrimSuffix(name, ".pack")}
		f, err := os.Open(name)
		if err != nil {
			continue // merged away meanwhile
		}
		// The index is read after the pack is open: the file open is the
		// one the index describes, even if the pack is merged away now.
		es, err := packEntries(p)
		if err != nil {
			f.Close()
			continue
		}
		i := len(u.Files)
		u.Files = append(u.Files, f)
		u.entries = append(u.entries, es)
		for k, e := range es {
			if _, dup := u.at[e.hash]; want[e.hash] && !dup {
				u.at[e.hash] = reuseEntry{pack: i, k: k}
			}
		}
	}
	return u
}

func (u *Reuse) Close() {
	for _, f := range u.Files {
		f.Close()
	}
}

// Reusable is how an object's entry is copied: its header as stored (src),
// the header it is sent with (dst: a delta that names its base by offset is
// sent naming it by hash, since offsets change), and for a delta its base.
type Reusable struct {
	e        PackEntry
	file     *os.File
	Src, dst []byte
	Type     plumbing.ObjectType // as stored
	size     int64               // as stored: a delta's is the delta's
	Delta    bool
	base     Hash
	Read     func(h Hash, t plumbing.ObjectType, limit int64) ([]byte, bool) // packReuse.read
}

// Entry returns how h can be copied, and false when it is read and sent
// whole: in no pack, a damaged header, or a delta whose base is not sent
// from the same pack.
func (u *Reuse) Entry(h Hash) (Reusable, bool) {
	loc, ok := u.at[h]
	if !ok {
		return Reusable{}, false
	}
	es := u.entries[loc.pack]
	e := es[loc.k]
	var head [64]byte
	n := min(e.end-e.off, int64(len(head)))
	if n <= 0 {
		return Reusable{}, false
	}
	f := u.Files[loc.pack]
	if _, err := f.ReadAt(head[:n], e.off); err != nil && err != io.EOF {
		return Reusable{}, false
	}
	t, size, ofs, base, hn, err := parseEntryHead(head[:n])
	if err != nil {
		return Reusable{}, false
	}
	r := Reusable{e: e, file: f, Src: append([]byte(nil), head[:hn]...), Type: t, size: size, Read: u.Cached}
	r.dst = r.Src
	switch t {
	case plumbing.OFSDeltaObject:
		k := sort.Search(len(es), func(k int) bool { return es[k].off >= e.off-ofs })
		if ofs <= 0 || k == len(es) || es[k].off != e.off-ofs {
			return Reusable{}, false
		}
		base = es[k].hash
		r.dst = append(EntryHeader(plumbing.REFDeltaObject, size), base[:]...)
		fallthrough
	case plumbing.REFDeltaObject:
		if b, ok := u.at[base]; !ok || b.pack != loc.pack {
			return Reusable{}, false
		}
		r.Delta, r.base = true, base
	}
	return r, true
}

// copyTo appends the entry of h to b as it is stored.
func (r Reusable) copyTo(b *Builder, h Hash) error {
	rest := io.NewSectionReader(r.file, r.e.off+int64(len(r.Src)), r.e.end-r.e.off-int64(len(r.Src)))
	if err := b.copy(h, r.Src, r.dst, rest, r.e.crc); err != nil {
		return fmt.Errorf("%s: %w", r.file.Name(), err)
	}
	return nil
}

// Load inflates an entry stored whole, no further than its header's size,
// once its bytes match the CRC-32 of the pack's index. A content that r.read
// has already resolved is taken as it is once its SHA-1 names the entry's
// object, which checks more than the CRC-32 of its compressed bytes would.
func (r Reusable) Load() ([]byte, error) {
	if r.Read != nil {
		if data, ok := r.Read(r.e.hash, r.Type, r.size); ok && int64(len(data)) == r.size && RawHash(r.Type, data) == r.e.hash {
			return data, nil
		}
	}
	// The span is the distance to the next entry in the index of a pack that
	// may be another repository's: never allocate past what zlib could make of
	// the header's size, however far that entry stands.
	span := r.e.end - r.e.off - int64(len(r.Src))
	if span < 0 || span > 2*r.size+1024 {
		return nil, fmt.Errorf("the entry of %s spans %d bytes, more than %d bytes deflate to", r.e.hash, span, r.size)
	}
	z := make([]byte, span)
	if _, err := r.file.ReadAt(z, r.e.off+int64(len(r.Src))); err != nil {
		return nil, err
	}
	if crc32.Update(crc32.ChecksumIEEE(r.Src), crc32.IEEETable, z) != r.e.crc {
		return nil, fmt.Errorf("the entry of %s does not match its checksum", r.e.hash)
	}
	data := make([]byte, r.size)
	if err := object.InflateInto(z, data, false); err != nil {
		return nil, err
	}
	return data, nil
}

// RawHash is the name of an object of type t holding data, by plain SHA-1:
// it checks that a content read back from this repository's own packs is the
// object asked for. Objects came into those packs under names computed with
// collision detection (see computeHash); this only has to tell a wrong content
// from the right one.
func RawHash(t plumbing.ObjectType, data []byte) Hash {
	d := sha1.New()
	d.Write(t.Bytes())
	d.Write([]byte{' '})
	d.Write(strconv.AppendInt(nil, int64(len(data)), 10))
	d.Write([]byte{0})
	d.Write(data)
	var h Hash
	d.Sum(h[:0])
	return h
}
