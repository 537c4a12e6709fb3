package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"github.com/memvault/memvault/gitlog/gittest"
)

// folderHistory commits a folder of files names, then edits one file per
// commit, flushing every flushEvery commits so that each flush makes a pack of
// its own; it returns every commit.
func folderHistory(t *testing.T, r *Repo, files, edits, flushEvery int) []Hash {
	t.Helper()
	var seed []Change
	for i := range files {
		seed = append(seed, Change{Op: Put, Path: fmt.Sprintf("m/d/file-%04d.md", i), Data: []byte(fmt.Sprint("first ", i))})
	}
	heads := []Hash{commit(t, r, seed...)}
	for i := range edits {
		p := fmt.Sprintf("m/d/file-%04d.md", i*7%files)
		heads = append(heads, commit(t, r, Change{Op: Put, Path: p, Data: []byte(fmt.Sprint("edit ", i))}))
		if (i+1)%flushEvery == 0 {
			flush(t, r)
		}
	}
	flush(t, r)
	return heads
}

// verifyPack runs git verify-pack -v on every pack of the repository at dir and
// counts the trees stored as deltas, and the longest chain. Every delta must
// follow its base (baseFirst).
func verifyPack(t *testing.T, dir string) (treeDeltas, trees, longest int) {
	t.Helper()
	idxs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	for _, idx := range idxs {
		out, err := exec.Command("git", "--git-dir", dir, "verify-pack", "-v", idx).CombinedOutput()
		if err != nil {
			t.Fatalf("git verify-pack %s: %v\n%s", idx, err, out)
		}
		for line := range strings.Lines(string(out)) {
			f := strings.Fields(line)
			if len(f) >= 5 && f[1] == "tree" {
				trees++
				if len(f) == 7 {
					treeDeltas++
					if d, _ := strconv.Atoi(f[5]); d > longest {
						longest = d
					}
				}
			}
		}
		pack, err := os.ReadFile(strings.TrimSuffix(idx, ".idx") + ".pack")
		if err != nil {
			t.Fatal(err)
		}
		baseFirst(t, filepath.Base(idx), pack)
	}
	return treeDeltas, trees, longest
}

// checkHistory checks the repository at dir with git fsck --strict, and that
// a fresh Repo reads every tree and blob of every commit in heads.
func checkHistory(t *testing.T, dir string, heads []Hash) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	fresh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, h := range heads {
		root, err := fresh.RootTree(h)
		if err == nil {
			err = readAllBlobs(fresh, root)
		}
		if err != nil {
			t.Fatalf("commit %s: %v", h, err)
		}
	}
}

// TestPackStoresTreesAsDeltas: each commit writes a new version of a folder
// of 300 names, and memvault's packs once held every version whole, 23 times
// the bytes git needs for the same history. Each flush of the journal stores
// the versions it packs as deltas of one another, and after Pack, which
// merges the flushes' packs, the chains run across them: git reads them
// (fsck --strict, verify-pack), memvault reads every version, and the
// objects take a fraction of the bytes.
func TestPackStoresTreesAsDeltas(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	r, dir := openWithGCAuto(t, "0")
	defer r.Close()
	heads := folderHistory(t, r, 300, 120, 10)
	// 12 flushes of 10 commits (the first with the seed's): in each, all
	// versions of m/d but one.
	if deltas, trees, _ := verifyPack(t, dir); deltas < 100 {
		t.Fatalf("before Pack: %d of %d trees are deltas, want those of m/d in each flush but one", deltas, trees)
	}
	res, err := r.Pack(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deltas, trees, longest := verifyPack(t, dir)
	t.Logf("Pack: %+v; %d of %d trees are deltas, the longest chain %d", res, deltas, trees, longest)
	// Each commit writes three trees; the root's and m's, of one name each,
	// are too small to gain from a delta: the 121 versions of m/d must.
	if deltas < 110 {
		t.Errorf("after Pack: %d of %d trees are deltas, want the 121 versions of m/d but a few", deltas, trees)
	}
	if longest > defaultDeltaDepth {
		t.Errorf("after Pack: a chain of %d deltas, over git's default depth %d", longest, defaultDeltaDepth)
	}
	// The same history with every tree whole (pack.window 0) is the measure:
	// the flushes' packs, and Pack's, take a fraction of its bytes.
	w, wdir := openWithGCAuto(t, "0")
	defer w.Close()
	setConfig(t, wdir, "pack.window", "0")
	folderHistory(t, w, 300, 120, 10)
	whole, err := w.Pack(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Before*4 > whole.After || res.After > res.Before {
		t.Errorf("objects: %d bytes after the flushes, %d after Pack, against %d with trees whole: want under a quarter, and Pack no bigger", res.Before, res.After, whole.After)
	}
	_, packs := looseAndPacks(t, dir)
	if packs != 1 {
		t.Errorf("after Pack: %d packs, want 1", packs)
	}
	checkHistory(t, dir, heads)

	// A second Pack finds nothing to do, and writes the same pack.
	if again, err := r.Pack(context.Background()); err != nil || again.After != res.After || again.Objects != 0 {
		t.Errorf("a second Pack = %+v, %v; want nothing to do, %d bytes", again, err, res.After)
	}
}

// TestPackDepthAcrossMerges: a merge copies the deltas of earlier merges as
// they are and makes new ones on top of their bases, so a chain grows with
// each merge unless the chains already based on an object count against the
// deltas it may become. Here pack.depth is 3 and every round merges: no chain
// may pass 3, and every version stays readable.
func TestPackDepthAcrossMerges(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	r, dir := openWithGCAuto(t, "0")
	defer r.Close()
	setConfig(t, dir, "pack.depth", "3")
	var heads []Hash
	for round := range 6 {
		if round == 0 {
			heads = append(heads, folderHistory(t, r, 50, 5, 5)...)
		}
		for i := range 5 {
			heads = append(heads, commit(t, r, Change{Op: Put, Path: fmt.Sprintf("m/d/file-%04d.md", i), Data: []byte(fmt.Sprint("round ", round))}))
		}
		if _, err := r.Pack(context.Background()); err != nil {
			t.Fatal(err)
		}
		deltas, trees, longest := verifyPack(t, dir)
		t.Logf("round %d: %d of %d trees are deltas, the longest chain %d", round, deltas, trees, longest)
		if longest > 3 {
			t.Fatalf("round %d: a chain of %d deltas, over pack.depth 3", round, longest)
		}
	}
	if deltas, trees, _ := verifyPack(t, dir); deltas < trees/4 {
		t.Errorf("%d of %d trees are deltas: the depth limit stopped them all", deltas, trees)
	}
	checkHistory(t, dir, heads)
}

// TestPackWindowZero: pack.window 0 turns the search for deltas off, as in git.
func TestPackWindowZero(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	r, dir := openWithGCAuto(t, "0")
	defer r.Close()
	setConfig(t, dir, "pack.window", "0")
	folderHistory(t, r, 50, 20, 5)
	if _, err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if deltas, trees, _ := verifyPack(t, dir); deltas != 0 {
		t.Errorf("pack.window 0: %d of %d trees are deltas, want none", deltas, trees)
	}
}

// TestWriteNewPackDeltas: loose objects that git wrote are packed with their
// trees as deltas.
func TestWriteNewPackDeltas(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	r, dir := openWithGCAuto(t, "0")
	defer r.Close()
	heads := folderHistory(t, r, 100, 10, 100)
	// Every tree of the pack written out loose, as git writes objects, and
	// the pack removed: gc packs the loose files anew.
	idxs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(idxs) != 1 {
		t.Fatalf("%d packs, want 1", len(idxs))
	}
	cmd := exec.Command("sh", "-c", "mv "+idxs[0]+" "+dir+"/p.pack && rm "+dir+"/objects/pack/*.idx && git --git-dir "+dir+" unpack-objects < "+dir+"/p.pack && rm "+dir+"/p.pack")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unpack: %v\n%s", err, out)
	}
	if err := r.writeNewPack(context.Background(), mustLoose(t, r)); err != nil {
		t.Fatal(err)
	}
	if deltas, trees, _ := verifyPack(t, dir); deltas < 9 {
		t.Errorf("%d of %d trees are deltas, want most of the 11 versions of m/d", deltas, trees)
	}
	checkHistory(t, dir, heads)
}

func mustLoose(t *testing.T, r *Repo) []Hash {
	t.Helper()
	hs, _, err := r.looseObjects()
	if err != nil || len(hs) == 0 {
		t.Fatalf("looseObjects = %d, %v", len(hs), err)
	}
	return hs
}

// TestDeltasTravel: git reads the deltas memvault writes (a git push of the
// packed vault, whose pack-objects reuses them), and memvault indexes a fetch
// of them as git's upload-pack sends them (by offset): every version stays
// readable on the other side, which git fsck --strict passes too.
func TestDeltasTravel(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	src, srcDir := openWithGCAuto(t, "0")
	defer src.Close()
	heads := folderHistory(t, src, 200, 60, 20)
	if _, err := src.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if deltas, _, _ := verifyPack(t, srcDir); deltas < 50 {
		t.Fatalf("the source holds %d trees as deltas, want the 61 versions of m/d but a few", deltas)
	}
	url := gittest.Daemon(t)
	if out, err := exec.Command("git", "--git-dir", srcDir, "push", "-q", url, "refs/heads/main:refs/heads/main").CombinedOutput(); err != nil {
		t.Fatalf("git push of the packed vault: %v\n%s", err, out)
	}

	dst, dstDir := openWithGCAuto(t, "0")
	defer dst.Close()
	if err := dst.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	got, err := dst.Fetch(context.Background(), "origin", TransferOptions{})
	if err != nil || got != heads[len(heads)-1] {
		t.Fatalf("Fetch = %s, %v; want %s", got, err, heads[len(heads)-1])
	}
	if deltas, _, _ := verifyPack(t, dstDir); deltas < 50 {
		t.Errorf("the fetched pack holds %d trees as deltas: git's server did not send them as such, the test proves nothing", deltas)
	}
	checkHistory(t, dstDir, heads)
}

// TestEdgeDelta: what edgeDelta writes gives the target back from the base,
// by go-git's patcher, including copies longer than one instruction holds.
// git's own reads the trees gc stores as such deltas in
// TestPackStoresTreesAsDeltas.
func TestEdgeDelta(t *testing.T) {
	long := bytes.Repeat([]byte("0123456789abcdef"), 1<<20+3) // past a copy's 16 MiB
	cases := []struct{ name, base, target string }{
		{"same", "tree entries", "tree entries"},
		{"middle", "aaaa-1-zzzz", "aaaa-22-zzzz"},
		{"start", "xbcdef", "ybcdef"},
		{"end", "abcdex", "abcdey"},
		{"grown", "abc", "abcabc"},
		{"shrunk", "abcabc", "abc"},
		{"nothing shared", "abc", "xyz"},
		{"long insert", "<>", "<" + strings.Repeat("i", 300) + ">"},
		{"long copies", string(long), string(long[:len(long)/2]) + "new" + string(long[len(long)/2:])},
		{"a copy past 16 MiB", string(long), string(long) + "x"},
	}
	for _, c := range cases {
		d, _ := edgeDelta([]byte(c.base), []byte(c.target))
		got, err := packfile.PatchDelta([]byte(c.base), d)
		if err != nil || string(got) != c.target {
			t.Errorf("%s: patched = %.40q, %v; want %.40q", c.name, got, err, c.target)
		}
	}
	if d, n := edgeDelta(long, append(long[:len(long):len(long)], 'x')); len(d) > 20 || n != 1 {
		t.Errorf("one byte added to %d: a delta of %d bytes, want a few", len(long), len(d))
	}
}

// TestSearchGivesUpOnGroupsThatNeverDelta: a group whose objects share
// nothing (commits with random messages, as sealed ones are) is read only
// until giveUpMisses of them failed to delta; a group that deltas from the
// start is compared to its end, and so is one that found a delta before
// giving up, whatever follows (chains of deltas end at the depth limit).
func TestSearchGivesUpOnGroupsThatNeverDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() []byte {
		b := make([]byte, 700)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	folder := bytes.Repeat([]byte("100644 a-sealed-name-of-some-length.md\x00aaaaaaaaaaaaaaaaaaaa"), 40)
	version := func(i int) []byte {
		v := bytes.Clone(folder)
		copy(v[len(v)/2:], fmt.Sprintf("%08d", i))
		return v
	}
	objects := map[Hash][]byte{}
	var cands []deltaCand
	add := func(typ plumbing.ObjectType, name uint32, data []byte) Hash {
		h := computeHash(typ, data)
		objects[h] = data
		cands = append(cands, deltaCand{hash: h, typ: typ, size: int64(len(data)), name: name, order: len(cands)})
		return h
	}
	var commits, trees, late []Hash
	for range 200 {
		commits = append(commits, add(plumbing.CommitObject, 0, random()))
	}
	for i := range 100 {
		trees = append(trees, add(plumbing.TreeObject, 1, version(i)))
	}
	// Unlike each other at first (fewer than giveUpMisses), then a few
	// versions of one folder, more than giveUpMisses unlike ones, and
	// versions again: found deltas, the search never gives up on it.
	for range giveUpMisses - 2 {
		late = append(late, add(plumbing.TreeObject, 2, random()))
	}
	for i := range 3 {
		late = append(late, add(plumbing.TreeObject, 2, version(1000+i)))
	}
	for range giveUpMisses + 4 {
		late = append(late, add(plumbing.TreeObject, 2, random()))
	}
	for i := range 45 {
		late = append(late, add(plumbing.TreeObject, 2, version(2000+i)))
	}
	loads := map[Hash]int{}
	load := func(h Hash) ([]byte, error) {
		loads[h]++
		return objects[h], nil
	}
	found, err := searchDeltas(context.Background(), cands, load, defaultDeltaWindow, defaultDeltaDepth)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, h := range commits {
		read += loads[h]
		if _, ok := found.deltas[h]; ok {
			t.Errorf("random commit %s stored as a delta", h)
		}
	}
	if read > giveUpMisses+1 {
		t.Errorf("%d of %d commits that never delta were read, want at most %d", read, len(commits), giveUpMisses+1)
	}
	for name, group := range map[string][]Hash{"folder": trees[1:], "late folder": late[len(late)-44:]} {
		n := 0
		for _, h := range group {
			if _, ok := found.deltas[h]; ok {
				n++
			}
		}
		if whole := len(group) - n; whole > len(group)/defaultDeltaDepth { // a chain ends at the depth limit
			t.Errorf("%s: %d of %d versions stored whole, want at most %d", name, whole, len(group), len(group)/defaultDeltaDepth)
		}
	}
}

func FuzzEdgeDelta(f *testing.F) {
	f.Add([]byte("100644 a.md\x00aaaaaaaaaaaaaaaaaaaa"), []byte("100644 a.md\x00bbbbbbbbbbbbbbbbbbbb"))
	f.Add([]byte("x"), []byte("xy"))
	f.Fuzz(func(t *testing.T, base, target []byte) {
		if len(base) == 0 || len(target) == 0 {
			return // never compared: a delta's objects have bytes (mayDelta)
		}
		d, _ := edgeDelta(base, target)
		got, err := packfile.PatchDelta(base, d)
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("patched = %q, %v; want %q", got, err, target)
		}
	})
}
