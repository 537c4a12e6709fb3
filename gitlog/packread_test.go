package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// packedTwice makes a history whose trees delta (one folder of many names,
// one changed a commit, and a branchy part), packed by memvault (deltas that
// name their base by hash) and by git's repack with long chains (by offset),
// and returns both repositories' directories.
func packedTwice(t *testing.T) (mine, gits string) {
	t.Helper()
	git := gittest.Git(t)
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for i := range 60 {
		var cs []Change
		if i == 0 {
			for k := range 80 {
				cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("m/f/%02d.md", k), Data: fmt.Appendf(nil, "file %d", k)})
			}
		}
		cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("m/f/%02d.md", i%80), Data: fmt.Appendf(nil, "edit %d", i)})
		commit(t, src, cs...)
	}
	branchyHistory(t, src, rand.New(rand.NewPCG(5, 6)), 30)
	if _, err := src.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	gits = filepath.Join(t.TempDir(), "copy.git")
	for _, args := range [][]string{
		{"clone", "-q", "--bare", "--no-local", src.Dir(), gits},
		{"--git-dir", gits, "repack", "-adf", "-q", "--depth=100", "--window=50"},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return src.Dir(), gits
}

// gitObjects lists the objects of the repository at dir as git's cat-file
// finds them: type and whether git stores it as a delta.
func gitObjects(t *testing.T, dir string) (typ map[Hash]string, delta map[Hash]bool) {
	t.Helper()
	out, err := exec.Command(gittest.Git(t), "--git-dir", dir, "cat-file", "--batch-all-objects",
		"--batch-check=%(objectname) %(objecttype) %(deltabase)").Output()
	if err != nil {
		t.Fatal(err)
	}
	typ, delta = map[Hash]string{}, map[Hash]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		h, err := ParseHash(f[0])
		if err != nil {
			t.Fatal(err)
		}
		typ[h] = f[1]
		delta[h] = strings.Trim(f[2], "0") != ""
	}
	return typ, delta
}

// TestPackSetReads: every commit and tree of packs with deltas (memvault's
// and git's, chains up to 100 deep) reads straight from the pack as git's
// cat-file reads it, trees decoding as go-git decodes them; an object of
// another type or over the limit is left to the ordinary path, before
// anything of it is inflated.
func TestPackSetReads(t *testing.T) {
	git := gittest.Git(t)
	mine, gits := packedTwice(t)
	for _, dir := range []string{mine, gits} {
		name := filepath.Base(dir)
		typ, delta := gitObjects(t, dir)
		s := pack.NewSet(dir)
		deltas, blobs := 0, 0
		for h, ty := range typ {
			want, err := exec.Command(git, "--git-dir", dir, "cat-file", ty, h.String()).Output()
			if err != nil {
				t.Fatal(err)
			}
			var pt plumbing.ObjectType
			switch ty {
			case "commit":
				pt = plumbing.CommitObject
			case "tree":
				pt = plumbing.TreeObject
			default:
				if _, ok := s.Read(h, plumbing.TreeObject, maxStruct); ok {
					t.Errorf("%s: read(%s, tree) of a %s = ok, want false", name, h, ty)
				}
				if ty == "blob" && !delta[h] { // a delta is left to go-git
					blobs++
					got, size, ok := s.BlobPrefix(h, 3)
					if !ok || size != int64(len(want)) || !bytes.Equal(got, want[:min(3, len(want))]) {
						t.Errorf("%s: blobPrefix(%s, 3) = %q, %d, %v; want %q, %d", name, h, got, size, ok, want[:min(3, len(want))], len(want))
					}
				}
				continue
			}
			if _, _, ok := s.BlobPrefix(h, 3); ok {
				t.Errorf("%s: blobPrefix(%s) of a %s = ok, want false", name, h, ty)
			}
			if delta[h] {
				deltas++
			}
			got, ok := s.Read(h, pt, maxStruct)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("%s: read(%s, %s) = %q, %v; want %q", name, h, ty, got, ok, want)
			}
			if _, ok := s.Read(h, plumbing.BlobObject, maxStruct); ok {
				t.Errorf("%s: read(%s, blob) of a %s = ok, want false", name, h, ty)
			}
			if len(want) > 0 {
				if _, ok := s.Read(h, pt, int64(len(want))-1); ok {
					t.Errorf("%s: read(%s) within %d bytes of %d = ok, want false", name, h, len(want)-1, len(want))
				}
			}
			if pt != plumbing.TreeObject {
				continue
			}
			es, ok := parseTree(got)
			var gt object.Tree
			if err := gt.Decode(&knownObject{h: h, t: pt, data: got}); err != nil || !ok {
				t.Fatalf("%s: tree %s: parseTree ok %v, go-git %v", name, h, ok, err)
			}
			if len(es) != len(gt.Entries) {
				t.Fatalf("%s: tree %s: %d entries, go-git %d", name, h, len(es), len(gt.Entries))
			}
			for i, e := range gt.Entries {
				if entryOf(e) != es[i] {
					t.Errorf("%s: tree %s entry %d = %+v, go-git %+v", name, h, i, es[i], entryOf(e))
				}
			}
		}
		if deltas == 0 {
			t.Errorf("%s: no commit or tree stored as a delta: the test reads nothing through a chain", name)
		}
		if blobs == 0 {
			t.Errorf("%s: no blob stored whole", name)
		}
		s.Close()
		if _, ok := s.Read(ZeroHash, plumbing.TreeObject, maxStruct); ok {
			t.Errorf("read after close = ok")
		}
	}
}

// TestPackSetLeavesDamage: a pack whose entry cannot be inflated is left to
// the lookup, which fails the read, and a big blob asked for as a tree is
// never inflated.
func TestPackSetLeavesDamage(t *testing.T) {
	_, gits := packedTwice(t)
	typ, delta := gitObjects(t, gits)
	var tree Hash
	for h, ty := range typ {
		if ty == "tree" && !delta[h] {
			tree = h
			break
		}
	}
	if tree.IsZero() {
		t.Fatal("no whole tree in git's pack")
	}
	packs, _ := filepath.Glob(filepath.Join(gits, "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs, want 1", len(packs))
	}
	s := pack.NewSet(gits)
	if _, ok := s.Read(tree, plumbing.TreeObject, maxStruct); !ok {
		t.Fatalf("read(%s) of the whole pack failed", tree)
	}
	s.Close()
	idxData, err := os.ReadFile(strings.TrimSuffix(packs[0], ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bytes.NewReader(idxData)).Decode(idx); err != nil {
		t.Fatal(err)
	}
	off, err := idx.FindOffset(gg(tree))
	if err != nil {
		t.Fatalf("find: %v", err)
	}
	pf, err := os.Open(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	sc := pack.NewScanner(nil)
	if _, err := sc.At(pf, off); err != nil {
		t.Fatalf("head: %v", err)
	}
	hn := sc.Offset() - off // the zlib stream starts here
	pf.Close()

	// The zlib header of the tree's entry broken, by hand.
	os.Chmod(packs[0], 0o644)
	f, err := os.OpenFile(packs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff}, off+hn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s = pack.NewSet(gits)
	defer s.Close()
	if got, ok := s.Read(tree, plumbing.TreeObject, maxStruct); ok {
		t.Errorf("read of a broken entry = %q, ok; want false", got)
	}
	r, err := Open(gits)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if es, err := r.ReadTree(tree); err == nil {
		t.Errorf("ReadTree of a broken entry = %v, nil; want an error", es)
	}

	// A blob of a megabyte asked for as a tree, or within less: nothing is
	// inflated, nothing kept.
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	big := bytes.Repeat([]byte("x"), 1<<20)
	commit(t, src, Change{Op: Put, Path: "big", Data: big})
	if _, err := src.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := pack.NewSet(src.Dir())
	defer b.Close()
	h := computeHash(plumbing.BlobObject, big)
	if _, ok := b.Read(h, plumbing.TreeObject, maxStruct); ok {
		t.Error("read(blob, tree) = ok")
	}
	if _, ok := b.Read(h, plumbing.BlobObject, 1000); ok {
		t.Error("read(blob) within 1000 bytes = ok")
	}
	if b.Held != 0 {
		t.Errorf("%d bytes held after refusing a big blob, want 0", b.Held)
	}
	if got, ok := b.Read(h, plumbing.BlobObject, 2<<20); !ok || !bytes.Equal(got, big) {
		t.Errorf("read(blob) within 2 MiB = %d bytes, %v; want the blob", len(got), ok)
	}
	// A blob read is never kept: vault keeps its plaintext, and a large
	// one would push every delta base out of the cache.
	if b.Held != 0 {
		t.Errorf("%d bytes held after reading a blob, want 0", b.Held)
	}
	if typ, got, err := b.Get(h, plumbing.AnyObject, 2<<20); err != nil || typ != plumbing.BlobObject || !bytes.Equal(got, big) || b.Held != 0 {
		t.Errorf("Get(blob) = %s, %d bytes, %v, %d held; want the blob, none held", typ, len(got), err, b.Held)
	}
}

// TestPackSetNewPacks: a pack added after the listing is found.
func TestPackSetNewPacks(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for i := range 3 {
		h := commit(t, r, Change{Op: Put, Path: fmt.Sprintf("m/%d.md", i), Data: []byte("x")})
		if _, err := r.Pack(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.packs.Read(h, plumbing.CommitObject, maxStruct); !ok {
			t.Fatalf("commit %d, packed after the last listing: not read from its pack", i)
		}
	}
}

// parseTreeSeeds are tree contents, well and badly formed.
var parseTreeSeeds = [][]byte{
	{},
	[]byte("100644 a\x00aaaaaaaaaaaaaaaaaaaa40000 d\x00bbbbbbbbbbbbbbbbbbbb"),
	[]byte("040000 d\x00bbbbbbbbbbbbbbbbbbbb"),
	[]byte("100664 a\x00aaaaaaaaaaaaaaaaaaaa100755 b\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("120000 l\x00aaaaaaaaaaaaaaaaaaaa160000 s\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("0 z\x00aaaaaaaaaaaaaaaaaaaa777777 y\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("100644 a b\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("100644 \x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("100644 a\x00aaaaaaaaaaaaaaaaaaa"),
	[]byte("100644 a"),
	[]byte("100644"),
	[]byte("10064x a\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte(" 100644 a\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("+100644 a\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("77777777777 a\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("100644 a\x00aaaaaaaaaaaaaaaaaaaa100644 a\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("100644 b\x00aaaaaaaaaaaaaaaaaaaa100644 a\x00aaaaaaaaaaaaaaaaaaaa"),
	[]byte("1_0 a\x00aaaaaaaaaaaaaaaaaaaa"),
}

// FuzzParseTree: parseTree reads any content as go-git's Tree.Decode does:
// it fails where go-git fails (the read is then left to go-git, which
// reports it), and otherwise gives the same entries.
func FuzzParseTree(f *testing.F) {
	for _, s := range parseTreeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, ok := parseTree(data)
		var gt object.Tree
		err := gt.Decode(&knownObject{t: plumbing.TreeObject, data: data})
		if ok != (err == nil) {
			t.Fatalf("parseTree(%q) ok = %v; go-git's Decode: %v", data, ok, err)
		}
		if !ok {
			return
		}
		if len(es) != len(gt.Entries) {
			t.Fatalf("parseTree(%q): %d entries, go-git %d", data, len(es), len(gt.Entries))
		}
		for i, e := range gt.Entries {
			if entryOf(e) != es[i] {
				t.Fatalf("parseTree(%q) entry %d = %+v, go-git %+v", data, i, es[i], entryOf(e))
			}
		}
	})
}

// BenchmarkReadTrees reads every tree of a packed history of a folder of 100
// names (memvault's packs: trees as deltas), straight from the packs
// (pack.Set.Read) and through the whole lookup (journal, packs, loose), as
// admission and the local-path server read them, with no cache of decoded
// trees.
//
//	go test ./gitlog -run '^$' -bench BenchmarkReadTrees -count 5
func BenchmarkReadTrees(b *testing.B) {
	r, err := Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var roots []Hash
	for i := range 300 {
		var cs []Change
		if i == 0 {
			for k := range 100 {
				cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("memories/f/%03d.md", k), Data: fmt.Appendf(nil, "file %d", k)})
			}
		}
		cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("memories/f/%03d.md", i%100), Data: fmt.Appendf(nil, "edit %d", i)})
		h := commit(b, r, cs...)
		t, err := r.RootTree(h)
		if err != nil {
			b.Fatal(err)
		}
		roots = append(roots, t)
	}
	if _, err := r.Pack(context.Background()); err != nil {
		b.Fatal(err)
	}
	var trees []Hash
	for _, root := range roots {
		for _, p := range []string{"", "memories", "memories/f"} {
			e, err := r.Lookup(root, p)
			if err != nil {
				b.Fatal(err)
			}
			trees = append(trees, e.Hash)
		}
	}
	b.Run("pack.Set", func(b *testing.B) {
		for range b.N {
			for _, h := range trees {
				data, ok := r.packs.Read(h, plumbing.TreeObject, maxStruct)
				if !ok {
					b.Fatalf("read(%s) failed", h)
				}
				if _, ok := parseTree(data); !ok {
					b.Fatalf("parseTree(%s) failed", h)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(trees)), "µs/tree")
	})
	b.Run("lookup", func(b *testing.B) {
		for range b.N {
			for _, h := range trees {
				if _, err := r.lookTree(h); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(trees)), "µs/tree")
	})
}
