package gitlog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/gitlog/internal/pack"
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
	if longest > pack.DefaultDepth {
		t.Errorf("after Pack: a chain of %d deltas, over git's default depth %d", longest, pack.DefaultDepth)
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
