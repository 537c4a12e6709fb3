package gitlog

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

func TestGeometricSplit(t *testing.T) {
	for _, tc := range []struct {
		counts []uint32
		merged int // how many of the smallest packs merge
	}{
		{nil, 0},
		{[]uint32{10}, 0},
		{[]uint32{10, 20, 40, 80}, 0},         // already a progression
		{[]uint32{10, 10}, 2},                 // two equal packs
		{[]uint32{5, 10, 20, 40}, 0},          // each exactly twice the one before
		{[]uint32{6700, 6700, 13400, 1e6}, 3}, // a new pack rolls up the small ones
		{[]uint32{1, 1, 1, 1, 1, 1000}, 5},
		{[]uint32{100, 3, 1000, 2}, 2}, // unsorted in: the two smallest merge
	} {
		var packs []pack.File
		for i, c := range tc.counts {
			packs = append(packs, pack.File{Base: fmt.Sprint(i), Objects: c})
		}
		got := geometricSplit(packs)
		if len(got) != tc.merged {
			t.Errorf("geometricSplit(%v) merges %d packs, want %d", tc.counts, len(got), tc.merged)
			continue
		}
		// After the merge, the packs must grow by a factor of two.
		var sum uint32
		for _, p := range got {
			sum += p.Objects
		}
		sizes := []uint32{}
		if sum > 0 {
			sizes = append(sizes, sum)
		}
		for _, p := range packs[len(got):] {
			sizes = append(sizes, p.Objects)
		}
		slices.Sort(sizes)
		for i := 1; i < len(sizes); i++ {
			if sizes[i] < 2*sizes[i-1] {
				t.Errorf("geometricSplit(%v): after merging, packs %v do not double", tc.counts, sizes)
				break
			}
		}
	}
}

// openWithGCAuto makes a repository in a new directory and opens it with
// gc.auto set to n; the caller closes it.
func openWithGCAuto(t *testing.T, n string) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	setConfig(t, dir, "gc.auto", n)
	r.Close()
	if r, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// setConfig sets a key in the repository's config with git itself.
func setConfig(t *testing.T, dir, key, value string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", dir, "config", key, value).CombinedOutput(); err != nil {
		t.Fatalf("git config %s %s: %v\n%s", key, value, err, out)
	}
}

// looseAndPacks counts the loose objects and the packs of the repository at dir.
func looseAndPacks(t *testing.T, dir string) (loose, packs int) {
	t.Helper()
	l, _ := filepath.Glob(filepath.Join(dir, "objects", "[0-9a-f][0-9a-f]", "*"))
	p, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	return len(l), len(p)
}

// TestAutoPack: with a low gc.auto, what the flushes of the journal make is
// packed by itself as it accumulates. Commits flushed every 20 make 30 packs,
// which merge geometrically down to a few; 400 loose objects that git wrote
// (past gc.auto 300) go into a pack at a flush. git agrees the repository is
// sound, and every commit is there.
func TestAutoPack(t *testing.T) {
	r, dir := openWithGCAuto(t, "300")
	var paths []string
	for i := range 400 {
		p := filepath.Join(t.TempDir(), fmt.Sprint(i))
		os.WriteFile(p, fmt.Appendf(nil, "a loose object git wrote, %d\n", i), 0o644)
		paths = append(paths, p)
	}
	cmd := exec.Command("git", "--git-dir", dir, "hash-object", "-w", "--stdin-paths")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git hash-object: %v\n%s", err, out)
	}
	const commits = 600
	for i := range commits {
		commit(t, r, Change{Op: Put, Path: fmt.Sprintf("m/%d/%d", i%7, i%50), Data: fmt.Appendf(nil, "%d", i)})
		if i%20 == 19 {
			if _, err := r.flushJournal(context.Background(), true); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Close() // waits for a running pack, and merges what is left
	loose, packs := looseAndPacks(t, dir)
	t.Logf("after %d commits in 30 flushes: %d loose objects, %d packs", commits, loose, packs)
	if loose > 300 {
		t.Errorf("%d loose objects left with gc.auto 300: the loose objects were never packed", loose)
	}
	if packs > 8 {
		t.Errorf("%d packs from 30 flushes: consolidation does not keep them few", packs)
	}
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v\n%s", err, out)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, _ := r.Head()
	n := 0
	if err := r.walkAll(head, func(*Commit) error { n++; return nil }); err != nil || n != commits {
		t.Errorf("walk after packing: %d commits, %v; want %d", n, err, commits)
	}
}

// TestAutoPackOff: gc.auto 0 leaves the packs that flushes of the journal
// make as they are, never merged.
func TestAutoPackOff(t *testing.T) {
	r, dir := openWithGCAuto(t, "0")
	for i := range 300 {
		commit(t, r, Change{Op: Put, Path: fmt.Sprintf("m/%d", i), Data: fmt.Appendf(nil, "%d", i)})
		if i%100 == 99 {
			flush(t, r)
		}
	}
	r.Close()
	if loose, packs := looseAndPacks(t, dir); packs < 3 || loose != 0 {
		t.Errorf("gc.auto 0: %d packs and %d loose objects, want 3 flushes' packs (at least) and none loose", packs, loose)
	}
}

// TestPackersAndReaders runs two packers of two openers at once, beside a
// writer of a third, while a long-lived reader walks the history, reads every
// tree and blob at the head, and must see every new commit: nothing fails,
// nothing is lost, and the packs merge.
func TestPackersAndReaders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	open := func() *Repo {
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	reader, p1, p2 := open(), open(), open()
	done := make(chan struct{})
	var wg sync.WaitGroup
	packs := make([]int, 2)
	for i, p := range []*Repo{p1, p2} {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := p.Pack(ctx); err != nil {
					t.Errorf("packer %d: %v", i, err)
					return
				}
				packs[i]++
			}
		})
	}
	var reads int
	wg.Go(func() {
		seen := 0
		for {
			select {
			case <-done:
				return
			default:
			}
			head, err := reader.Head()
			if err != nil {
				t.Errorf("reader: head: %v", err)
				return
			}
			n := 0
			if err := reader.walkAll(head, func(*Commit) error { n++; return nil }); err != nil {
				t.Errorf("reader: walk after %d reads: %v", reads, err)
				return
			}
			if n < seen {
				t.Errorf("reader: %d commits, fewer than the %d it saw before", n, seen)
				return
			}
			seen = n
			root, err := reader.RootTree(head)
			if err == nil {
				err = readAllBlobs(reader, root)
			}
			if err != nil {
				t.Errorf("reader: %v", err)
				return
			}
			reads++
		}
	})
	const commits = 300
	var last Hash
	for i := range commits {
		last = commit(t, w, Change{Op: Put, Path: fmt.Sprintf("m/%d/%d", i%5, i%30), Data: fmt.Appendf(nil, "%d", i)})
		if i%50 == 49 {
			time.Sleep(20 * time.Millisecond) // let the packers finish a round
		}
	}
	close(done)
	wg.Wait()
	if packs[0]+packs[1] < 4 || reads < 4 {
		t.Fatalf("packers ran %v times and the reader %d times: the test proves little", packs, reads)
	}
	n := 0
	if err := reader.walkAll(last, func(*Commit) error { n++; return nil }); err != nil || n != commits {
		t.Errorf("reader sees %d commits (%v), want %d", n, err, commits)
	}
	if problems, err := w.Check(ctx, nil); err != nil || len(problems) != 0 {
		t.Errorf("Check = %v, %v", problems, err)
	}
	if _, packs := looseAndPacks(t, dir); packs > 10 {
		t.Errorf("%d packs after %d packer runs: they do not merge", packs, packs)
	}
}

// readAllBlobs reads every tree and blob under tree h.
func readAllBlobs(r *Repo, h Hash) error {
	es, err := r.ReadTree(h)
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.IsDir() {
			err = readAllBlobs(r, e.Hash)
		} else {
			_, err = r.ReadBlob(e.Hash)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TestPackRemovesStaleTemps: what a killed packer or fetch left goes at the
// next pack; a temporary file still being written stays.
func TestPackRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	stale := filepath.Join(dir, "objects", "pack", "tmp_pack_stale")
	fresh := filepath.Join(dir, "objects", "pack", "tmp_pack_fresh")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, make([]byte, 1<<20), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleAfter)
	os.Chtimes(stale, old, old)
	if _, err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary pack still there after Pack (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a temporary pack being written was removed: %v", err)
	}
}

// TestMergePacksCopiesAndChecks: merging copies whole objects' entries as they
// are and rewrites deltas (here from a pack git made) whole; git finds the
// merged pack sound, and every version reads back. An entry whose bytes no
// longer match the checksum in its index fails the merge, and nothing is lost.
func TestMergePacksCopiesAndChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var heads []Hash
	for i := range 30 {
		heads = append(heads, commit(t, r, Change{Op: Put, Path: fmt.Sprintf("m/%d", i%40), Data: fmt.Appendf(nil, "version %d", i)}))
	}
	flush(t, r)
	// git packs the history with deltas between the similar trees.
	if out, err := exec.Command("git", "--git-dir", dir, "repack", "-a", "-d", "-f", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	if out, _ := exec.Command("git", "--git-dir", dir, "count-objects", "-v").Output(); !strings.Contains(string(out), "packs: 1\n") {
		t.Fatalf("after git repack: %s", out)
	}
	verify, _ := exec.Command("sh", "-c", "git --git-dir "+dir+" verify-pack -v "+dir+"/objects/pack/*.idx").Output()
	deltas := 0
	for line := range strings.Lines(string(verify)) {
		if f := strings.Fields(line); len(f) == 7 {
			deltas++
		}
	}
	if deltas == 0 {
		t.Fatalf("git made no delta: the test proves nothing\n%s", verify)
	}
	// A change and its undo: the undo's trees are those git's pack holds
	// whole, as the bases of its deltas, and come first in the merge, so
	// git's copies are skipped and its deltas must not be copied as they are.
	for _, v := range []string{"changed", "version 5"} {
		heads = append(heads, commit(t, r, Change{Op: Put, Path: "m/5", Data: []byte(v)}))
		flush(t, r)
	}
	packs, err := r.listPacks()
	if err != nil || len(packs) != 3 {
		t.Fatalf("listPacks = %d packs, %v; want 3", len(packs), err)
	}
	// Smallest first, as consolidate merges them: git's pack, with the
	// deltas, then lands at other offsets than it had.
	sort.Slice(packs, func(i, j int) bool { return packs[i].Objects < packs[j].Objects })
	if packs[2].Objects < 30 {
		t.Fatalf("packs %+v: git's pack is not the largest", packs)
	}

	// A damaged entry in one of memvault's packs: the merge fails.
	ours := packs[0]
	for _, p := range packs {
		if p.Objects < ours.Objects {
			ours = p
		}
	}
	packPath := ours.Base + ".pack"
	good, _ := os.ReadFile(packPath)
	bad := bytes.Clone(good)
	bad[20] ^= 0x40 // inside the first entry's compressed data
	os.Chmod(packPath, 0o644)
	os.WriteFile(packPath, bad, 0o444)
	if _, err := r.mergePacks(ctx, packs); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("mergePacks over a damaged entry = %v, want a checksum error", err)
	}
	os.Chmod(packPath, 0o644)
	os.WriteFile(packPath, good, 0o444)
	if after, _ := r.listPacks(); len(after) != 3 {
		t.Fatalf("a failed merge left %d packs, want the 3 it started from", len(after))
	}

	if _, err := r.mergePacks(ctx, packs); err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		for _, ext := range []string{".pack", ".idx"} {
			os.Remove(p.Base + ext)
		}
	}
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck after the merge: %v\n%s", err, out)
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
			t.Fatalf("commit %s after the merge: %v", h, err)
		}
	}
}

// TestIdleFlushPacks: without Close or Flush, a pause after a commit puts the
// journal into a pack, for plain git to see, and then packs the loose objects
// git itself wrote once they pass gc.auto.
func TestIdleFlushPacks(t *testing.T) {
	r, dir := openWithGCAuto(t, "100")
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()
	files := t.TempDir()
	var names []string
	for i := range 300 {
		p := filepath.Join(files, fmt.Sprint(i))
		os.WriteFile(p, fmt.Appendf(nil, "written by git %d", i), 0o644)
		names = append(names, p)
	}
	if out, err := exec.Command("git", append([]string{"--git-dir", dir, "hash-object", "-w"}, names...)...).CombinedOutput(); err != nil {
		t.Fatalf("git hash-object: %v\n%s", err, out)
	}
	c := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := exec.Command("git", "--git-dir", dir, "cat-file", "-e", c.String()).Run() == nil
		loose, _ := looseAndPacks(t, dir)
		if seen && loose < 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: git sees the commit: %v; %d loose objects", seen, loose)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The pack may still be removing the loose objects it packed, under
	// git fsck's feet (git's own repack does the same): let it end first.
	r.Close()
	closed = true
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// TestMergePacksStreamsDeltas: a delta in a fetched pack may stand for an
// object far bigger than memory: each byte 0x80 of a delta copies 64 KiB of its
// base. Merging copies it as a delta that names its base, never resolved: it
// once was resolved (streamed) and written whole, 64 MiB on disk for 1 KiB.
// The pack is made here, byte by byte, as a remote could send it: a 64 KiB blob
// and a delta of 1,024 bytes that makes a 64 MiB blob of it, which names its
// base by offset; git indexes it, and checks the merge.
func TestMergePacksStreamsDeltas(t *testing.T) {
	const base, copies = 64 << 10, 1024
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	var delta []byte
	delta = binary.AppendUvarint(delta, base)
	delta = binary.AppendUvarint(delta, base*copies)
	delta = append(delta, bytes.Repeat([]byte{0x80}, copies)...)
	zlibOf := func(b []byte) []byte {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		return z.Bytes()
	}
	var buf bytes.Buffer
	buf.WriteString("PACK")
	binary.Write(&buf, binary.BigEndian, [2]uint32{2, 2})
	buf.Write(pack.EntryHeader(plumbing.BlobObject, base))
	buf.Write(zlibOf(bytes.Repeat([]byte("m"), base)))
	deltaAt := buf.Len()
	buf.Write(pack.EntryHeader(plumbing.OFSDeltaObject, int64(len(delta))))
	buf.WriteByte(byte(deltaAt - 12)) // the base's offset, backwards: under 128
	buf.Write(zlibOf(delta))
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	name := filepath.Join(dir, "objects", "pack", fmt.Sprintf("pack-%x.pack", sum))
	if err := os.WriteFile(name, buf.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "--git-dir", dir, "index-pack", name).CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	flush(t, r)
	packs, err := r.listPacks()
	if err != nil || len(packs) != 2 {
		t.Fatalf("listPacks = %d packs, %v; want 2", len(packs), err)
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := r.mergePacks(context.Background(), packs); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	n := after.TotalAlloc - before.TotalAlloc
	if n >= base*copies/8 {
		t.Errorf("the merge allocated %d MiB for a %d MiB object", n>>20, base*copies>>20)
	}
	t.Logf("the merge allocated %d MiB in all for a %d MiB object", n>>20, base*copies>>20)
	for _, p := range packs {
		for _, ext := range []string{".pack", ".idx"} {
			os.Remove(p.Base + ext)
		}
	}
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck after the merge: %v\n%s", err, out)
	}
	out, err := exec.Command("sh", "-c", "git --git-dir "+dir+" verify-pack -v "+dir+"/objects/pack/*.idx").Output()
	if err != nil || !strings.Contains(string(out), "chain length = 1: 1 object") {
		t.Errorf("the merged pack does not hold the %d-byte blob as a delta: %v\n%s", base*copies, err, out)
	}
	size, err := exec.Command("sh", "-c", "git --git-dir "+dir+" cat-file -s $(git --git-dir "+dir+" verify-pack -v "+dir+"/objects/pack/*.idx | awk 'NF == 7 {print $1}')").Output()
	if err != nil || strings.TrimSpace(string(size)) != fmt.Sprint(base*copies) {
		t.Errorf("git cat-file -s of the delta = %q, %v; want %d", size, err, base*copies)
	}
}
