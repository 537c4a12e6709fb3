package pack

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestIndexPackMalformed: a pack that is not what its header and checksum
// say is refused whole, as git's index-pack refuses it. Each is written by
// hand, byte by byte.
func TestIndexPackMalformed(t *testing.T) {
	blob := rawPackObject{typ: plumbing.BlobObject, data: []byte("a memory file's ciphertext")}
	good := rawPack(t, []rawPackObject{blob, blob})
	resum := func(p []byte) []byte {
		p = p[:len(p)-20]
		sum := sha1.Sum(p)
		return append(p, sum[:]...)
	}
	edit := func(f func(p []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name string
		pack []byte
		want string
	}{
		{"a checksum that does not match", edit(func(p []byte) []byte { p[len(p)-1] ^= 1; return p }), errPackChecksum.Error()},
		{"data past the checksum", append(bytes.Clone(good), 0), "data past the pack's checksum"},
		{"no checksum", good[:len(good)-20], "checksum cut short"},
		{"more objects counted than held", edit(func(p []byte) []byte { p[11] = 3; return resum(p) }), "entry at"},
		{"not a pack", edit(func(p []byte) []byte { p[0] = 'J'; return p }), "no PACK signature"},
		{"an unknown version", edit(func(p []byte) []byte { p[7] = 4; return p }), "version 4"},
		{"an unknown type", edit(func(p []byte) []byte { p[12] = p[12]&0x8f | 5<<4; return resum(p) }), "unknown type 5"},
		{"inflating to more than its header says", rawPack(t, []rawPackObject{{typ: plumbing.BlobObject, data: blob.data, size: 3}}), "bytes inflated, where its header says 3"},
		{"inflating to less than its header says", rawPack(t, []rawPackObject{{typ: plumbing.BlobObject, data: blob.data, size: 300}}), "where its header says 300"},
		{"a delta inflating to less than its header says", rawPack(t, []rawPackObject{blob, {typ: plumbing.OFSDeltaObject, data: rawDelta(blob.data, 4, nil), size: 90}}), "where its header says 90"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := IndexPack(context.Background(), bytes.NewReader(tc.pack))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("indexPack: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, _, err := IndexPack(context.Background(), bytes.NewReader(good)); err != nil {
		t.Fatalf("IndexPack of the pack the others were made from: %v", err)
	}
}

// TestIndexPackReadsInAnyPieces: a pack read in pieces of a few bytes, so
// that a piece ends inside every entry header, zlib stream and the checksum,
// and a pack whose deltas are all read again when applied (none kept from
// the scan), index as git indexes them.
func TestIndexPackReadsInAnyPieces(t *testing.T) {
	path, _ := gitChainPack(t, 40)
	pack, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := gitIndexPack(t, path)
	for _, tc := range []struct {
		name  string
		chunk int
		keep  int64
	}{
		{"a byte a read", 1, deltaKeepBudget},
		{"seven bytes a read", 7, deltaKeepBudget},
		{"no delta kept", 0, 0},
		{"no delta kept, 5 bytes a read", 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := NewIndexer(DeltaCacheBudget)
			x.keep, x.chunk = tc.keep, tc.chunk
			got, _, err := x.Index(context.Background(), bytes.NewReader(pack))
			if err != nil {
				t.Fatal(err)
			}
			sameIndex(t, got, want)
		})
	}
}

// TestIndexPackKeptDeltasWithinBudget: the deltas IndexPack keeps from its
// scan hold no more memory than it counts against its budget, however small
// they are, and a delta too short to be one fails the scan at once.
func TestIndexPackKeptDeltasWithinBudget(t *testing.T) {
	w := bytes.Repeat([]byte("w"), 64)
	objs := []rawPackObject{{typ: plumbing.BlobObject, data: w}}
	for i := range 2000 {
		objs = append(objs, rawPackObject{typ: plumbing.OFSDeltaObject, base: i, data: rawDelta(w, 64, nil)})
	}
	x := NewIndexer(DeltaCacheBudget)
	x.s = NewScanner(bytes.NewReader(rawPack(t, objs)))
	count, err := x.s.header()
	if err != nil {
		t.Fatal(err)
	}
	if err := x.scan(context.Background(), count); err != nil {
		t.Fatal(err)
	}
	var held int64
	kept := 0
	for _, o := range x.objs {
		if o.delta != nil {
			held += int64(cap(o.delta)) + 24 // the slice in its entry
			kept++
		}
	}
	if kept != len(objs)-1 || held > x.kept {
		t.Fatalf("%d deltas kept holding %d bytes, %d counted", kept, held, x.kept)
	}

	short := rawPack(t, []rawPackObject{objs[0], {typ: plumbing.OFSDeltaObject, data: nil}})
	if _, _, err := IndexPack(context.Background(), bytes.NewReader(short)); err == nil || !strings.Contains(err.Error(), "shorter than any delta") {
		t.Fatalf("IndexPack of an empty delta: %v", err)
	}
}

// FuzzIndexPack: whatever a remote sends, IndexPack returns an index of
// every object its header counts, or an error; it never panics. The fuzzer's
// bytes are taken as a pack's entries and given a good checksum when resum is
// set (a mutation of the entries would otherwise fail the checksum, and never
// reach the parsing and the deltas), and keep bounds the deltas kept from the
// scan (0: every delta read again when applied).
func FuzzIndexPack(f *testing.F) {
	w := bytes.Repeat([]byte("w"), 64)
	blob := rawPackObject{typ: plumbing.BlobObject, data: w}
	for _, p := range [][]byte{
		rawPack(f, []rawPackObject{blob}),
		rawPack(f, []rawPackObject{blob, {typ: plumbing.OFSDeltaObject, data: rawDelta(w, 32, []byte("changed"))}}),
		rawPack(f, []rawPackObject{blob, {typ: plumbing.REFDeltaObject, ref: computeHash(plumbing.BlobObject, w), data: rawDelta(w, 64, []byte("more"))}}),
	} {
		f.Add(p, false, uint16(0))
		f.Add(p[:len(p)-20], true, uint16(1000))
	}
	f.Fuzz(func(t *testing.T, pack []byte, resum bool, keep uint16) {
		if resum {
			sum := sha1.Sum(pack)
			pack = append(pack[:len(pack):len(pack)], sum[:]...)
		}
		x := NewIndexer(DeltaCacheBudget)
		x.keep = int64(keep)
		idx, _, err := x.Index(context.Background(), bytes.NewReader(pack))
		if err != nil {
			return
		}
		n, err := idx.Count()
		if err != nil || uint32(n) != binary.BigEndian.Uint32(pack[8:]) {
			t.Fatalf("an index of %d objects (%v), where the pack counts %d", n, err, binary.BigEndian.Uint32(pack[8:]))
		}
	})
}
