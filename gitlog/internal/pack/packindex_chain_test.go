package pack

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/gitlog/internal/disk"
)

// gitChainPack makes, with the git binary, the pack a hostile remote sends:
// one file edited edits times, repacked so that its versions form one long
// chain of deltas. It returns the pack's path and the longest chain git
// reports.
func gitChainPack(tb testing.TB, edits int) (string, int) {
	tb.Helper()
	// A file of 1,500 lines; each commit edits one line.
	lines := make([]string, 1500)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %05d %s", i, strings.Repeat("lorem ipsum dolor sit amet ", 2))
	}
	var stream bytes.Buffer
	for k := range edits {
		lines[k*37%len(lines)] = fmt.Sprintf("edit %d %s", k, strings.Repeat("x", 20))
		text := strings.Join(lines, "\n") + "\n"
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter a <a@example.invalid> %d +0000\ndata 2\nv\n", 1700000000+k)
		fmt.Fprintf(&stream, "M 100644 inline notes.md\ndata %d\n%s\n", len(text), text)
	}
	_, pack := gitImportPack(tb, stream.Bytes(), "--depth=4095", "--window=300")
	out, err := exec.Command(gittest.Git(tb), "verify-pack", "-v", pack).Output()
	if err != nil {
		tb.Fatalf("git verify-pack: %v", err)
	}
	longest := 0
	for _, m := range regexp.MustCompile(`chain length = (\d+):`).FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		longest = max(longest, n)
	}
	return pack, longest
}

// gitImportPack makes a bare repository with the git binary from a
// fast-import stream, repacked into one pack with git repack -adfq and the
// options given. It returns the repository and the pack's path.
func gitImportPack(tb testing.TB, stream []byte, repack ...string) (dir, pack string) {
	tb.Helper()
	git := gittest.Git(tb)
	dir = tb.TempDir()
	run := func(stdin []byte, args ...string) {
		tb.Helper()
		cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(nil, "init", "-q", "--bare")
	run(stream, "fast-import", "--quiet")
	run(nil, append([]string{"repack", "-adfq"}, repack...)...)
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		tb.Fatalf("packs: %v", packs)
	}
	return dir, packs[0]
}

// gitIndexPack indexes pack with git index-pack into a temporary file and
// returns the file's path.
func gitIndexPack(tb testing.TB, pack string) string {
	tb.Helper()
	idx := filepath.Join(tb.TempDir(), "pack.idx")
	if out, err := exec.Command(gittest.Git(tb), "index-pack", "-o", idx, pack).CombinedOutput(); err != nil {
		tb.Fatalf("git index-pack: %v\n%s", err, out)
	}
	return idx
}

// sameIndex fails t unless got names the objects of the git index at path,
// at the same offsets, with the same CRCs.
func sameIndex(t *testing.T, got *idxfile.MemoryIndex, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(f).Decode(want); err != nil {
		t.Fatal(err)
	}
	wn, _ := want.Count()
	gn, _ := got.Count()
	if gn != wn {
		t.Fatalf("IndexPack named %d objects, git %d", gn, wn)
	}
	entries, err := want.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := entries.Next()
		if err != nil {
			break
		}
		off, err := got.FindOffset(e.Hash)
		if err != nil || uint64(off) != e.Offset {
			t.Errorf("object %s: IndexPack offset %d, %v; git %d", e.Hash, off, err, e.Offset)
		}
		if crc, err := got.FindCRC32(e.Hash); err != nil || crc != e.CRC32 {
			t.Errorf("object %s: IndexPack CRC %x, %v; git %x", e.Hash, crc, err, e.CRC32)
		}
	}
}

// TestIndexPackLongChainMatchesGit indexes what a remote that edited one file
// 300 times sends, packed by git as one long chain of deltas: indexing it
// resolved every delta from the chain's root again, 45,000 applications for
// 300 deltas, and a sync waited 40 seconds. The index must be git's, each
// delta applied once.
func TestIndexPackLongChainMatchesGit(t *testing.T) {
	pack, longest := gitChainPack(t, 300)
	if longest < 250 {
		t.Fatalf("git's longest chain is %d deltas, want a chain of about 300", longest)
	}
	f, err := os.Open(pack)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := NewIndexer(DeltaCacheBudget)
	got, _, err := x.Index(context.Background(), f)
	if err != nil {
		t.Fatalf("indexPack: %v", err)
	}
	sameIndex(t, got, gitIndexPack(t, pack))
	deltas := len(x.byOfs) + len(x.byRef)
	if x.stats.applied != deltas || x.stats.recomputed != 0 {
		t.Errorf("IndexPack applied %d deltas and %d again, want each of %d once", x.stats.applied, x.stats.recomputed, deltas)
	}
	t.Logf("%d objects, %d deltas, longest chain %d, at most %d bytes held", len(x.objs), deltas, longest, x.stats.peakHeld)
}

// rawObject is an object of a pack written by hand: a blob, or a delta
// whose base is an earlier object of the list (OFS) or a name (REF).
type rawPackObject struct {
	typ  plumbing.ObjectType
	data []byte // a blob's content, or a delta's instructions
	base int    // an OFS delta's base, an index into the list
	self bool   // an OFS delta that names itself as its base
	ref  Hash   // a REF delta's base
	size int    // the size its header says, if not 0: len(data)
}

// rawPack writes objs as a version 2 pack, as git lays one out.
func rawPack(tb testing.TB, objs []rawPackObject) []byte {
	tb.Helper()
	var p bytes.Buffer
	p.WriteString("PACK")
	binary.Write(&p, binary.BigEndian, uint32(2))
	binary.Write(&p, binary.BigEndian, uint32(len(objs)))
	offsets := make([]int, len(objs))
	zw := zlib.NewWriter(nil)
	for i, o := range objs {
		offsets[i] = p.Len()
		n := len(o.data)
		if o.size != 0 {
			n = o.size
		}
		b := byte(o.typ)<<4 | byte(n&0x0f)
		for n >>= 4; n > 0; n >>= 7 {
			p.WriteByte(b | 0x80)
			b = byte(n & 0x7f)
		}
		p.WriteByte(b)
		switch o.typ {
		case plumbing.OFSDeltaObject:
			off := 0
			if !o.self {
				off = offsets[i] - offsets[o.base]
			}
			var enc [10]byte
			pos := len(enc) - 1
			enc[pos] = byte(off & 0x7f)
			for off >>= 7; off > 0; off >>= 7 {
				off--
				pos--
				enc[pos] = 0x80 | byte(off&0x7f)
			}
			p.Write(enc[pos:])
		case plumbing.REFDeltaObject:
			p.Write(o.ref[:])
		}
		zw.Reset(&p)
		zw.Write(o.data)
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	sum := sha1.Sum(p.Bytes())
	p.Write(sum[:])
	return p.Bytes()
}

// rawDelta makes a delta that copies base's first keep bytes and appends add
// (at most 127 bytes).
func rawDelta(base []byte, keep int, add []byte) []byte {
	d := binary.AppendUvarint(nil, uint64(len(base)))
	d = binary.AppendUvarint(d, uint64(keep+len(add)))
	if keep > 0 {
		d = append(d, 0x80|0x10, byte(keep)) // copy from offset 0, one size byte
	}
	if len(add) > 0 {
		d = append(d, byte(len(add)))
	}
	return append(d, add...)
}

// chainVersion is version k of the blob of a chain: 64 bytes.
func chainVersion(k int) []byte {
	return fmt.Appendf(nil, "%032d%032d", 7, k)
}

// chainPack is a blob and n OFS deltas, each on the one before, and the name
// of the chain's last version.
func chainPack(tb testing.TB, n int) ([]byte, Hash) {
	objs := []rawPackObject{{typ: plumbing.BlobObject, data: chainVersion(0)}}
	for k := 1; k <= n; k++ {
		objs = append(objs, rawPackObject{typ: plumbing.OFSDeltaObject, base: k - 1,
			data: rawDelta(chainVersion(k-1), 32, chainVersion(k)[32:])})
	}
	return rawPack(tb, objs), computeHash(plumbing.BlobObject, chainVersion(n))
}

// treePack is a blob W, a delta D1 on it, deltas D2..D4 on D1 and a delta on
// each of those: a base with several children, whose content is needed again
// after its first child's subtree is done.
func treePack(tb testing.TB) []byte {
	w := bytes.Repeat([]byte("w"), 64)
	d1 := append(w[:32:32], bytes.Repeat([]byte("1"), 32)...)
	objs := []rawPackObject{
		{typ: plumbing.BlobObject, data: w},
		{typ: plumbing.OFSDeltaObject, base: 0, data: rawDelta(w, 32, d1[32:])},
	}
	for c := byte('2'); c <= '4'; c++ {
		child := append(d1[:32:32], bytes.Repeat([]byte{c}, 32)...)
		objs = append(objs, rawPackObject{typ: plumbing.OFSDeltaObject, base: 1, data: rawDelta(d1, 32, child[32:])})
		objs = append(objs, rawPackObject{typ: plumbing.OFSDeltaObject, base: len(objs) - 1, data: rawDelta(child, 48, []byte("leaf"))})
	}
	return rawPack(tb, objs)
}

// TestIndexPackAppliesEachDeltaOnce counts delta applications: each delta
// once, and again only to make a content the budget dropped. Resolving each
// delta from its chain's root cost a chain of 300 deltas 45,150.
func TestIndexPackAppliesEachDeltaOnce(t *testing.T) {
	chain, _ := chainPack(t, 300)
	tree := treePack(t)
	for _, tc := range []struct {
		name           string
		pack           []byte
		budget         int64
		deltas, redone int
	}{
		{"chain", chain, DeltaCacheBudget, 300, 0},
		{"chain, nothing kept", chain, 0, 300, 0},
		{"tree", tree, DeltaCacheBudget, 7, 0},
		// D1 is dropped as D2 and D3 hold their own for their children, and
		// made again for D3 and D4.
		{"tree, nothing kept", tree, 0, 7, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := NewIndexer(tc.budget)
			if _, _, err := x.Index(context.Background(), bytes.NewReader(tc.pack)); err != nil {
				t.Fatalf("indexPack: %v", err)
			}
			if x.stats.applied != tc.deltas || x.stats.recomputed != tc.redone {
				t.Errorf("IndexPack applied %d deltas and %d again, want %d and %d", x.stats.applied, x.stats.recomputed, tc.deltas, tc.redone)
			}
			if tc.budget == 0 && x.stats.peakHeld > 3*64 {
				t.Errorf("IndexPack held %d bytes with no budget, want at most the three contents in hand", x.stats.peakHeld)
			}
		})
	}
}

// TestIndexPackChainDepth: git makes chains of at most 4095 deltas; a deeper
// one is refused, not resolved.
func TestIndexPackChainDepth(t *testing.T) {
	for _, tc := range []struct {
		n       int
		refused bool
	}{{4095, false}, {4096, true}, {4100, true}} {
		t.Run(strconv.Itoa(tc.n), func(t *testing.T) {
			pack, last := chainPack(t, tc.n)
			idx, _, err := IndexPack(context.Background(), bytes.NewReader(pack))
			if tc.refused {
				if !errors.Is(err, errDeltaDepth) {
					t.Fatalf("IndexPack of a chain of %d deltas: %v, want %v", tc.n, err, errDeltaDepth)
				}
				return
			}
			if err != nil {
				t.Fatalf("IndexPack of a chain of %d deltas: %v", tc.n, err)
			}
			if ok, err := idx.Contains(gg(last)); !ok || err != nil {
				t.Errorf("index of a chain of %d deltas: no %s (%v)", tc.n, last, err)
			}
		})
	}
}

// TestIndexPackBadBases: deltas whose base is not in the pack, or that name
// each other or themselves, fail the index (or are named once) and never
// loop.
func TestIndexPackBadBases(t *testing.T) {
	w := bytes.Repeat([]byte("w"), 64)
	wh := computeHash(plumbing.BlobObject, w)
	other := computeHash(plumbing.BlobObject, []byte("not in the pack"))
	d := rawDelta(w, 32, []byte("changed"))
	c := append(w[:32:32], "changed"...)
	dh := computeHash(plumbing.BlobObject, c)
	ch := computeHash(plumbing.BlobObject, append(c[:32:32], "again"...))
	blob := rawPackObject{typ: plumbing.BlobObject, data: w}
	for _, tc := range []struct {
		name string
		objs []rawPackObject
		want error // nil: indexed
	}{
		{"REF base not in the pack", []rawPackObject{blob, {typ: plumbing.REFDeltaObject, ref: other, data: d}}, errDeltaBase},
		{"REF delta on a later REF delta", []rawPackObject{
			blob,
			{typ: plumbing.REFDeltaObject, ref: dh, data: rawDelta(c, 32, []byte("again"))},
			{typ: plumbing.REFDeltaObject, ref: wh, data: d},
		}, nil},
		{"REF deltas naming each other", []rawPackObject{
			blob,
			{typ: plumbing.REFDeltaObject, ref: dh, data: rawDelta(c, 32, []byte("again"))},
			{typ: plumbing.REFDeltaObject, ref: ch, data: d},
		}, errDeltaBase},
		{"OFS delta on itself", []rawPackObject{blob, {typ: plumbing.OFSDeltaObject, self: true, data: d}}, errDeltaBase},
		// Its result is its base again: the base's name now names it too.
		{"REF delta making its base", []rawPackObject{blob, {typ: plumbing.REFDeltaObject, ref: wh, data: rawDelta(w, 64, nil)}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _, err := IndexPack(ctx, bytes.NewReader(rawPack(t, tc.objs)))
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("indexPack: %v, want %v", err, tc.want)
			}
		})
	}
}

// stopAfter is a context cancelled once Err has been asked n times, so a test
// sees IndexPack stop in the middle of its work.
type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestIndexPackCancelled: a cancelled fetch stops indexing, before the first
// object and amid the deltas.
func TestIndexPackCancelled(t *testing.T) {
	pack, _ := chainPack(t, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := IndexPack(ctx, bytes.NewReader(pack)); !errors.Is(err, context.Canceled) {
		t.Errorf("IndexPack, cancelled: %v, want %v", err, context.Canceled)
	}
	x := NewIndexer(DeltaCacheBudget)
	if _, _, err := x.Index(&stopAfter{context.Background(), 10}, bytes.NewReader(pack)); !errors.Is(err, context.Canceled) {
		t.Errorf("IndexPack, cancelled amid the deltas: %v, want %v", err, context.Canceled)
	}
	if x.stats.applied >= 1000 {
		t.Errorf("IndexPack applied %d deltas once cancelled", x.stats.applied)
	}
}

// TestPackSinkCancelled: a sink given its fetch's context stops indexing once
// the fetch is cancelled, and installs nothing.
func TestPackSinkCancelled(t *testing.T) {
	dir := t.TempDir()
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(disk.OS, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Ctx = ctx
	pack, _ := chainPack(t, 10)
	if _, err := s.Write(pack); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close of a cancelled sink: %v, want %v", err, context.Canceled)
	}
	if left, _ := os.ReadDir(packDir); len(left) != 0 {
		t.Errorf("a cancelled sink left %d files in objects/pack", len(left))
	}
}
