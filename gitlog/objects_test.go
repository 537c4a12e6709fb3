package gitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/journal"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// closure is every object reachable from commit h, found the slow way.
func closure(t *testing.T, r *Repo, h Hash, into map[Hash]bool) {
	t.Helper()
	var tree func(h Hash)
	tree = func(h Hash) {
		if into[h] {
			return
		}
		into[h] = true
		es, err := r.ReadTree(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.IsDir() {
				tree(e.Hash)
			} else {
				into[e.Hash] = true
			}
		}
	}
	for todo := []Hash{h}; len(todo) > 0; {
		c := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if c.IsZero() || into[c] {
			continue
		}
		into[c] = true
		co, err := r.ReadCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		tree(co.TreeHash)
		todo = append(todo, co.ParentHashes...)
	}
}

// branchyHistory makes n commits on branches and merges, all at the same time,
// with few names and contents so that trees come back to earlier states.
func branchyHistory(t *testing.T, r *Repo, rng *rand.Rand, n int) []Hash {
	t.Helper()
	ctx := context.Background()
	paths := []string{"m/a.md", "m/b.md", "m/d/x.md", "m/d/y.md", "m/d/e/z.md", "top.md"}
	var commits []Hash
	for i := range n {
		wl, err := r.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := r.Head()
		parent := head
		if len(commits) > 0 && rng.IntN(3) == 0 {
			parent = commits[rng.IntN(len(commits))]
		}
		if err := wl.UpdateRef(Branch, head, parent); err != nil {
			t.Fatal(err)
		}
		present := map[string]bool{}
		root, _ := r.RootTree(parent)
		for _, p := range paths {
			if _, err := r.Lookup(root, p); err == nil {
				present[p] = true
			}
		}
		var changes []Change
		for range 1 + rng.IntN(2) {
			p := paths[rng.IntN(len(paths))]
			if present[p] && rng.IntN(3) == 0 {
				changes = append(changes, Change{Op: Delete, Path: p})
				delete(present, p)
				continue
			}
			changes = append(changes, Change{Op: Put, Path: p, Data: fmt.Appendf(nil, "v%d", rng.IntN(3))})
			present[p] = true
		}
		info := CommitInfo{Message: fmt.Sprintf("c%d\n", i), Author: sig(), Committer: sig()}
		var h Hash
		if len(commits) > 1 && rng.IntN(4) == 0 {
			other := commits[rng.IntN(len(commits))]
			if other == parent {
				other = commits[0]
			}
			info := info
			info.Parents = []Hash{parent, other}
			h, err = wl.Commit(context.Background(), parent, changes, info)
		} else {
			h, err = wl.Commit(context.Background(), parent, changes, info)
		}
		wl.Unlock()
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		commits = append(commits, h)
	}
	return commits
}

// TestMissingObjectsComplete: what missingObjects sends, with what the other side
// has, holds everything the wanted commit reaches, on random histories with
// branches, merges, equal commit times and trees that recur.
func TestMissingObjectsComplete(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(8) {
		r, err := Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		commits := branchyHistory(t, r, rng, 50)
		for range 25 {
			want := commits[rng.IntN(len(commits))]
			var haves []Hash
			have := map[Hash]bool{}
			for range rng.IntN(3) {
				h := commits[rng.IntN(len(commits))]
				haves = append(haves, h)
				closure(t, r, h, have)
			}
			objs, err := missingObjects(ctx, repoSource{r}, []Hash{want}, haves)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range objs {
				have[h] = true
			}
			need := map[Hash]bool{}
			closure(t, r, want, need)
			for h := range need {
				if !have[h] {
					t.Fatalf("seed %d: want %s, haves %v: %s is neither sent nor had", seed, want, haves, h)
				}
			}
			if len(haves) == 1 && haves[0] == want && len(objs) != 0 {
				t.Errorf("seed %d: the other side has %s already, yet %d objects are sent", seed, want, len(objs))
			}
		}
		r.Close()
	}
}

// TestPackSink: a fetched pack goes in whole, as one pack and its index, or not
// at all when it is cut off.
func TestPackSink(t *testing.T) {
	ctx := context.Background()
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	commits := branchyHistory(t, src, rand.New(rand.NewPCG(1, 2)), 20)
	want := commits[len(commits)-1]
	objs, err := missingObjects(ctx, repoSource{src}, []Hash{want}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sent bytes.Buffer
	if err := pack.WritePack(ctx, &sent, objs, src.openObject, nil, 0, 0); err != nil {
		t.Fatal(err)
	}

	dst, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	packDir := filepath.Join(dst.Dir(), "objects", "pack")
	for _, n := range []int{sent.Len() / 2, sent.Len() - 1} {
		s, err := dst.newPackSink(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Write(sent.Bytes()[:n])
		if err := s.Close(); err == nil {
			t.Errorf("a pack cut off after %d of %d bytes went in", n, sent.Len())
		}
		if left, _ := os.ReadDir(packDir); len(left) != 0 {
			t.Errorf("a cut-off pack left %v behind", left)
		}
	}
	s, err := dst.newPackSink(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Write(sent.Bytes())
	if err := s.Close(); err != nil {
		t.Fatalf("Close of a whole pack: %v", err)
	}
	files, _ := os.ReadDir(packDir)
	if len(files) != 2 {
		t.Errorf("objects/pack holds %v, want one pack and its index", files)
	}
	have := map[Hash]bool{}
	closure(t, dst, want, have) // fails the test if anything is missing
	if len(have) != len(objs) {
		t.Errorf("the pack holds %d objects reachable from the head, want %d", len(have), len(objs))
	}
}

// localRemote makes an empty repository in a folder of the test's and names
// it origin in r, by a file:// URL; it returns the folder.
func localRemote(t *testing.T, r *Repo) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	remote, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	remote.Close()
	if err := r.AddRemote("origin", "file://"+dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLocalPushCompareAndSwap: a push to a local repository that names an old
// value the branch no longer holds is refused, and the branch stays.
func TestLocalPushCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c1 := commit(t, src, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	c2 := commit(t, src, Change{Op: Put, Path: "m/a", Data: []byte("2")})
	c3 := commit(t, src, Change{Op: Put, Path: "m/a", Data: []byte("3")})
	remoteDir := localRemote(t, src)
	for _, h := range []Hash{c1, c2} {
		if err := src.Push(ctx, "origin", h, TransferOptions{}); err != nil {
			t.Fatalf("Push(%s): %v", h, err)
		}
	}
	// A clone that last saw the remote at c1 pushes c3: its old value is
	// stale, and the push must be refused without writing anything there.
	unlock, err := src.lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = src.casRef(RemoteRef("origin"), c2, c1, nil)
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	packDir := filepath.Join(remoteDir, "objects", "pack")
	before, _ := os.ReadDir(packDir)
	if err := src.Push(ctx, "origin", c3, TransferOptions{}); !errors.Is(err, ErrRejected) {
		t.Errorf("a push naming a stale old value: %v, want ErrRejected", err)
	}
	if after, _ := os.ReadDir(packDir); len(after) != len(before) {
		t.Errorf("the refused push left %d files in objects/pack, want %d", len(after), len(before))
	}
	r, err := Open(remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, _ := r.Head(); h != c2 {
		t.Errorf("the remote's main is %s after the stale push, want %s", h, c2)
	}
}

// TestLocalPushMovedWhileWaiting: a push into a local repository finds what
// to send before it waits for the target's writers. A writer that moves the
// target's branch meanwhile keeps its commit, and the push is refused.
func TestLocalPushMovedWhileWaiting(t *testing.T) {
	ctx := context.Background()
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c1 := commit(t, src, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	c2 := commit(t, src, Change{Op: Put, Path: "m/a", Data: []byte("2")})
	remoteDir := localRemote(t, src)
	if err := src.Push(ctx, "origin", c1, TransferOptions{}); err != nil {
		t.Fatal(err)
	}
	dst, err := Open(remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	wl, err := dst.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pushed := make(chan error, 1)
	go func() { pushed <- src.Push(ctx, "origin", c2, TransferOptions{}) }()
	// Time for the push to read the target's branch and wait for its lock.
	// Should it read later, it finds the branch moved and is refused all
	// the same: the outcome does not depend on the timing.
	time.Sleep(200 * time.Millisecond)
	theirs, err := wl.Commit(context.Background(), c1, []Change{{Op: Put, Path: "m/b", Data: []byte("theirs")}},
		CommitInfo{Message: "theirs\n", Author: sig(), Committer: sig()})

	wl.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-pushed; !errors.Is(err, ErrRejected) {
		t.Errorf("a push over a branch moved while it waited: %v, want ErrRejected", err)
	}
	if h, _ := dst.Head(); h != theirs {
		t.Errorf("the target's main is %s after the push, want the commit made meanwhile, %s", h, theirs)
	}
}

// TestTransferProgress: a push and a fetch given a progress writer say how many
// objects and bytes went, on one line that ends when they are done.
func TestTransferProgress(t *testing.T) {
	ctx := context.Background()
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var head Hash
	for i := range 10 {
		head = commit(t, src, Change{Op: Put, Path: fmt.Sprintf("m/%d", i), Data: []byte("x")})
	}
	remoteDir := localRemote(t, src)
	var sent bytes.Buffer
	if err := src.Push(ctx, "origin", head, TransferOptions{Progress: &sent}); err != nil {
		t.Fatal(err)
	}
	// 10 commits, 10 root trees, 10 trees of m, 1 blob (every file holds "x").
	if got := sent.String(); !strings.HasPrefix(got, "\rSending 31 objects: ") || !strings.HasSuffix(got, ", done.\n") {
		t.Errorf("push progress = %q", got)
	}
	dst, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	dst.AddRemote("origin", "file://"+remoteDir)
	var got bytes.Buffer
	if _, err := dst.Fetch(ctx, "origin", TransferOptions{Progress: &got}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.String(), "\rReceiving 31 objects: ") || !strings.HasSuffix(got.String(), ", done.\n") {
		t.Errorf("fetch progress = %q", got.String())
	}
	var quiet bytes.Buffer
	if _, err := dst.Fetch(ctx, "origin", TransferOptions{Progress: &quiet}); err != nil || quiet.Len() != 0 {
		t.Errorf("a fetch with nothing new said %q (%v)", quiet.String(), err)
	}
}

// TestPack: Pack moves every loose object into one pack; everything stays
// readable, and git itself finds the repository sound.
func TestPack(t *testing.T) {
	ctx := context.Background()
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	commits := branchyHistory(t, r, rand.New(rand.NewPCG(3, 4)), 30)
	need := map[Hash]bool{}
	closure(t, r, commits[len(commits)-1], need)
	res, err := r.Pack(ctx)
	if err != nil || res.Objects < len(need) {
		t.Fatalf("Pack = %d objects, %v; want at least the %d reachable objects", res.Objects, err, len(need))
	}
	if hs, _, err := r.looseObjects(); err != nil || len(hs) != 0 {
		t.Errorf("after Pack: %d loose objects left (%v)", len(hs), err)
	}
	got := map[Hash]bool{}
	closure(t, r, commits[len(commits)-1], got) // fails the test if anything is missing
	if res, err := r.Pack(ctx); res.Objects != 0 || res.After != res.Before || err != nil {
		t.Errorf("a second Pack = %+v, %v; want nothing to do", res, err)
	}
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "-C", r.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
			t.Errorf("git fsck after Pack: %v\n%s", err, out)
		}
	}
}

// TestMergeBase: on random branchy histories with equal commit times, MergeBase
// answers a best common ancestor, one below no other common one, as found by
// brute force.
func TestMergeBase(t *testing.T) {
	for seed := range uint64(6) {
		r, err := Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 9))
		commits := branchyHistory(t, r, rng, 40)
		ancestors := func(h Hash) map[Hash]bool {
			set := map[Hash]bool{}
			for todo := []Hash{h}; len(todo) > 0; {
				c := todo[len(todo)-1]
				todo = todo[:len(todo)-1]
				if !set[c] {
					set[c] = true
					co, err := r.ReadCommit(c)
					if err != nil {
						t.Fatal(err)
					}
					todo = append(todo, co.ParentHashes...)
				}
			}
			return set
		}
		for range 30 {
			a, b := commits[rng.IntN(len(commits))], commits[rng.IntN(len(commits))]
			ancA, ancB := ancestors(a), ancestors(b)
			best := map[Hash]bool{}
			for c := range ancA {
				if !ancB[c] {
					continue
				}
				below := false
				for o := range ancA {
					if o != c && ancB[o] && ancestors(o)[c] {
						below = true
						break
					}
				}
				if !below {
					best[c] = true
				}
			}
			got, err := r.MergeBase(context.Background(), a, b)
			if err != nil || !best[got] {
				t.Fatalf("seed %d: MergeBase(%s, %s) = %s, %v; want one of %v", seed, a, b, got, err, best)
			}
		}
		r.Close()
	}
}

// TestPackedByAnotherOpener: objects another process packs after this one
// built its list of packs (a gc, or a fetch, in another process) are still found
// by every read: links, short hashes and tags. Each check starts from objects
// this opener wrote itself, so its caches hold their trees and only the lookup
// under test can touch the storage.
func TestPackedByAnotherOpener(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A lookup that misses makes go-git build its list of packs, as a long-lived
	// process has long done.
	if _, err := r.st.EncodedObject(plumbing.AnyObject, plumbing.NewHash(strings.Repeat("01", 20))); err == nil {
		t.Fatal("a made-up object was found")
	}
	packByOther := func() {
		t.Helper()
		other, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		// Open itself flushes a journal no live writer holds; Pack does what
		// is left.
		if _, err := other.Pack(ctx); err != nil {
			t.Fatalf("Pack: %v", err)
		}
		data, err := os.ReadFile(other.journalPath())
		if err != nil {
			t.Fatal(err)
		}
		if _, recs, _ := journal.Read(data); len(recs) != 0 {
			t.Fatalf("after another opener's Pack, the journal holds %d records", len(recs))
		}
	}

	c1 := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	root, _ := r.RootTree(c1)
	old, err := r.Lookup(root, "m/a")
	if err != nil {
		t.Fatal(err)
	}
	packByOther()
	wl, _ := r.Lock(ctx)
	_, err = wl.Commit(context.Background(), c1, []Change{{Op: Link, Path: "m/old", Hash: old.Hash}}, CommitInfo{Message: "m\n", Author: sig(), Committer: sig()})
	wl.Unlock()
	if err != nil {
		t.Errorf("a link to a blob another opener packed: %v", err)
	}

	c3 := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("3")})
	packByOther()
	if hs, err := r.CommitsWithPrefix(c3.String()[:7]); err != nil || len(hs) != 1 {
		t.Errorf("CommitsWithPrefix of a commit another opener packed = %v, %v", hs, err)
	}

	wl, _ = r.Lock(ctx)
	_, err = wl.CreateTag("t1", c3, sig(), "m")
	wl.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	packByOther()
	if tag, err := r.LookupTag("t1"); err != nil || tag.Target != c3 {
		t.Errorf("LookupTag of a tag another opener packed = %+v, %v", tag, err)
	}
}

// TestPackWhileWriting: a writer in another opener goes on committing while Pack
// runs again and again; every commit lands, and the repository checks out.
func TestPackWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	packer, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer packer.Close()
	done := make(chan struct{})
	packs := make(chan int, 1)
	// If a commit fails the test, the packer still ends before the test's
	// directory goes, rather than failing every Pack after it.
	stop := sync.OnceFunc(func() { close(done) })
	defer func() {
		if stop(); len(packs) == 0 {
			<-packs
		}
	}()
	go func() {
		n := 0
		for {
			select {
			case <-done:
				packs <- n
				return
			default:
			}
			if _, err := packer.Pack(ctx); err != nil {
				t.Error(err)
			}
			n++
		}
	}()
	const commits = 200
	for i := range commits {
		commit(t, w, Change{Op: Put, Path: fmt.Sprintf("m/%d", i%20), Data: fmt.Appendf(nil, "%d", i)})
	}
	stop()
	n := <-packs
	packs <- n // for the deferred wait
	if n < 2 {
		t.Fatalf("Pack ran %d times during the writes; the test proves little", n)
	}
	head, _ := w.Head()
	got := 0
	if err := w.walkAll(head, func(*Commit) error { got++; return nil }); err != nil || got != commits {
		t.Errorf("%d commits reachable (%v), want %d", got, err, commits)
	}
	if problems, err := w.Check(ctx, nil); err != nil || len(problems) != 0 {
		t.Errorf("Check after packing while writing = %v, %v", problems, err)
	}
	for i := range 20 {
		if _, err := read(t, w, fmt.Sprintf("m/%d", i)); err != nil {
			t.Errorf("m/%d: %v", i, err)
		}
	}
}

// TestMergeBaseStopsWithContext: two unrelated histories are walked whole, so
// the walk ends with ctx's error once ctx is done, not after the whole history.
func TestMergeBaseStopsWithContext(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var long Hash
	for i := range 1500 {
		ch := []Change{{Op: Put, Path: "a.md", Data: fmt.Appendf(nil, "%d", i)}}
		if long, err = w.Commit(ctx, long, ch, CommitInfo{Message: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.UpdateRef(Branch, long, ZeroHash); err != nil {
		t.Fatal(err)
	}
	other, err := w.Commit(ctx, ZeroHash, []Change{{Op: Put, Path: "b.md", Data: []byte("b")}}, CommitInfo{Message: "root"})
	if err != nil {
		t.Fatal(err)
	}
	w.Unlock()
	if base, err := r.MergeBase(ctx, long, other); err != nil || !base.IsZero() {
		t.Fatalf("MergeBase of unrelated histories = %s, %v; want none", base, err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.MergeBase(done, long, other); !errors.Is(err, context.Canceled) {
		t.Fatalf("MergeBase with a cancelled context = %v; want context.Canceled", err)
	}
}
