package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// TestWritePackReuse: a pack sent from a repository whose packs hold deltas
// (memvault's, naming their base by hash, and git's, by offset) copies them
// as stored, and stays a pack both gitlog and git take: every object it must
// hold, no delta whose base is missing from it (a thin pack), and objects
// that git's index-pack --strict finds whole on top of what the other side
// holds.
func TestWritePackReuse(t *testing.T) {
	git := gittest.Git(t)
	ctx := context.Background()
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// One folder of many names, each commit changing one: its trees delta.
	var commits []Hash
	for i := range 40 {
		var cs []Change
		if i == 0 {
			for k := range 60 {
				cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("m/f/%02d.md", k), Data: fmt.Appendf(nil, "file %d", k)})
			}
		}
		cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("m/f/%02d.md", i%60), Data: fmt.Appendf(nil, "edit %d", i)})
		commits = append(commits, commit(t, src, cs...))
	}
	commits = append(commits, branchyHistory(t, src, rand.New(rand.NewPCG(3, 4)), 30)...)
	if _, err := src.Pack(ctx); err != nil {
		t.Fatal(err)
	}
	gitPacked := filepath.Join(t.TempDir(), "copy.git")
	for _, args := range [][]string{
		{"clone", "-q", "--bare", "--no-local", src.Dir(), gitPacked},
		{"--git-dir", gitPacked, "repack", "-adf", "-q"},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cp, err := Open(gitPacked)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()

	head, err := src.Head()
	if err != nil {
		t.Fatal(err)
	}
	type side struct {
		r     *Repo
		reuse bool
	}
	for _, s := range []side{{src, true}, {cp, true}, {src, false}} {
		r := s.r
		for _, have := range []Hash{ZeroHash, commits[0], commits[20], commits[39], head} {
			name := fmt.Sprintf("%s (reuse %v) from %s", filepath.Base(r.Dir()), s.reuse, have)
			var haves []Hash
			if !have.IsZero() {
				haves = []Hash{have}
			}
			objs, err := missingObjects(ctx, repoSource{r}, []Hash{head}, haves)
			if err != nil {
				t.Fatal(err)
			}
			var reuse *pack.Reuse
			if s.reuse {
				reuse = pack.OpenReuse(r.Dir(), objs)
			}
			var sent bytes.Buffer
			err = pack.WritePack(ctx, &sent, objs, r.openObject, reuse, pack.DefaultWindow, pack.DefaultDepth)
			if reuse != nil {
				reuse.Close()
			}
			if err != nil {
				t.Fatalf("%s: writePack: %v", name, err)
			}
			if reuse != nil && len(objs) > 0 && reuse.Copied == 0 {
				t.Errorf("%s: no entry was copied as stored", name)
			}
			x := pack.NewIndexer(pack.DeltaCacheBudget)
			idx, _, err := x.Index(ctx, bytes.NewReader(sent.Bytes()))
			if err != nil {
				t.Fatalf("%s: pack.IndexPack of the pack sent: %v", name, err)
			}
			if n, _ := idx.Count(); n != int64(len(objs)) {
				t.Errorf("%s: the pack sent holds %d objects, want %d", name, n, len(objs))
			}
			for _, h := range objs {
				if ok, _ := idx.Contains(gg(h)); !ok {
					t.Errorf("%s: the pack sent lacks %s", name, h)
				}
			}
			baseFirst(t, name, sent.Bytes())
			if have.IsZero() && x.Applied() == 0 {
				t.Errorf("%s: the whole history went without a delta", name)
			}

			// git takes it on top of what the other side has.
			dst := filepath.Join(t.TempDir(), "dst.git")
			if out, err := exec.Command(git, "init", "-q", "--bare", dst).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			if len(haves) > 0 {
				base, err := missingObjects(ctx, repoSource{r}, haves, nil)
				if err != nil {
					t.Fatal(err)
				}
				var bp bytes.Buffer
				if err := pack.WritePack(ctx, &bp, base, r.openObject, nil, 0, 0); err != nil {
					t.Fatal(err)
				}
				indexWithGit(t, git, dst, bp.Bytes())
			}
			indexWithGit(t, git, dst, sent.Bytes())
		}
	}
}

// indexWithGit stores pack in the repository dst with git index-pack
// --strict, which checks every object and every link.
func indexWithGit(t *testing.T, git, dst string, data []byte) {
	t.Helper()
	cmd := exec.Command(git, "--git-dir", dst, "index-pack", "--strict", "--stdin")
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git index-pack --strict: %v\n%s", err, out)
	}
}

// TestLocalPushMergesPacksLate: a push into a local path leaves its pack as
// it is, so the pusher never waits for the remote's packs to be merged, until
// the remote holds more than receivedPacks; then they are merged, and the
// remote never holds more.
func TestLocalPushMergesPacksLate(t *testing.T) {
	ctx := context.Background()
	src, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	remoteDir := localRemote(t, src)
	merged := false
	for i := 1; i <= 2*receivedPacks; i++ {
		h := commit(t, src, Change{Op: Put, Path: fmt.Sprintf("m/%d", i), Data: fmt.Appendf(nil, "%d", i)})
		if err := src.Push(ctx, "origin", h, TransferOptions{}); err != nil {
			t.Fatalf("Push %d: %v", i, err)
		}
		packs, _ := filepath.Glob(filepath.Join(remoteDir, "objects", "pack", "pack-*.pack"))
		switch {
		case len(packs) > receivedPacks:
			t.Fatalf("after push %d the remote holds %d packs, over %d", i, len(packs), receivedPacks)
		case !merged && len(packs) < i:
			merged = true
			if i <= receivedPacks {
				t.Errorf("push %d merged the remote's packs, before they were more than %d", i, receivedPacks)
			}
		case !merged && len(packs) != i:
			t.Errorf("after push %d the remote holds %d packs, want %d", i, len(packs), i)
		}
	}
	if !merged {
		t.Errorf("%d pushes never merged the remote's packs", 2*receivedPacks)
	}
	gitFsck(t, remoteDir)
}

// baseFirst fails the test unless every delta of pack comes after its base,
// as git writes them (git's unpack-objects, which takes small pushes, holds
// a delta until its base comes).
func baseFirst(t *testing.T, name string, data []byte) {
	t.Helper()
	ctx := context.Background()
	idx, _, err := pack.IndexPack(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s := packfile.NewScanner(bytes.NewReader(data))
	_, n, err := s.Header()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		oh, err := s.NextObjectHeader()
		if err != nil {
			t.Fatal(err)
		}
		if oh.Type == plumbing.REFDeltaObject {
			off, err := idx.FindOffset(oh.Reference)
			if err != nil || off >= oh.Offset {
				t.Errorf("%s: the delta at %d comes before its base %s (at %d, %v)", name, oh.Offset, oh.Reference, off, err)
			}
		}
		if _, _, err := s.NextObject(io.Discard); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReuseSmallSend: a send far smaller than the repository's packs does not
// read their indexes (which costs what the history holds), and one as large
// as them does.
func TestReuseSmallSend(t *testing.T) {
	ctx := context.Background()
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var cs []Change
	for k := range 2 * pack.ReuseShare {
		cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("m/%03d.md", k), Data: fmt.Appendf(nil, "file %d", k)})
	}
	h := commit(t, r, cs...)
	if _, err := r.Pack(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := missingObjects(ctx, repoSource{r}, []Hash{h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hs   []Hash
		want bool
	}{{all[:1], false}, {all, true}} {
		u := pack.OpenReuse(r.Dir(), c.hs)
		if got := len(u.Files) > 0; got != c.want {
			t.Errorf("pack.OpenReuse of %d of %d objects read the packs: %v, want %v", len(c.hs), len(all), got, c.want)
		}
		u.Close()
	}
}

// TestReuseLoadChecksRead: a tree that a send loads for its delta search is
// taken from the pack reader only when that content's SHA-1 names the tree;
// anything else is read from the entry, against its CRC-32, as before.
func TestReuseLoadChecksRead(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := commit(t, r, Change{Op: Put, Path: "m/a.md", Data: []byte("a")}, Change{Op: Put, Path: "m/b.md", Data: []byte("b")})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := r.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	u := pack.OpenReuse(r.dir, []Hash{c.TreeHash})
	defer u.Close()
	e, ok := u.Entry(c.TreeHash)
	if !ok || e.Delta || e.Type != plumbing.TreeObject {
		t.Fatalf("entry(%s) = %+v, %v; want a whole tree", c.TreeHash, e, ok)
	}
	want, err := e.Load()
	if err != nil || pack.RawHash(plumbing.TreeObject, want) != c.TreeHash {
		t.Fatalf("load() from the entry = %q, %v; want the tree %s", want, err, c.TreeHash)
	}
	var given []byte
	reads := 0
	e.Read = func(got Hash, typ plumbing.ObjectType, limit int64) ([]byte, bool) {
		reads++
		if got != c.TreeHash || typ != plumbing.TreeObject || limit != int64(len(want)) {
			t.Errorf("read(%s, %v, %d), want read(%s, tree, %d)", got, typ, limit, c.TreeHash, len(want))
		}
		return given, true
	}
	wrong := bytes.Clone(want)
	wrong[len(wrong)-1] ^= 1
	for _, tc := range []struct {
		name   string
		given  []byte
		shared bool // load returns given itself
	}{
		{"the tree", bytes.Clone(want), true},
		{"a byte changed", wrong, false},
		{"cut short", want[:len(want)-1], false},
		{"nothing", nil, false},
	} {
		given, reads = tc.given, 0
		got, err := e.Load()
		if err != nil || !bytes.Equal(got, want) || reads != 1 {
			t.Errorf("%s read: load() = %q, %v after %d reads; want %q after 1", tc.name, got, err, reads, want)
			continue
		}
		if shared := len(tc.given) > 0 && &got[0] == &tc.given[0]; shared != tc.shared {
			t.Errorf("%s read: load() returned what read gave: %v, want %v", tc.name, shared, tc.shared)
		}
	}
}

// TestFlushSeedsPackReads: a flush of the journal leaves the commits and
// trees it packed resolved in the pack reader, at their entries, as reading
// them would have; blobs are not kept.
func TestFlushSeedsPackReads(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	commit(t, r, Change{Op: Put, Path: "m/f/a.md", Data: []byte("a")})
	commit(t, r, Change{Op: Put, Path: "m/f/b.md", Data: []byte("b")})
	objs, _, _ := r.jobjs.Snapshot()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(objs) < 8 {
		t.Fatalf("the journal held %d objects, want two commits' (8 or more)", len(objs))
	}
	checkSeeded(t, r, objs)
}
