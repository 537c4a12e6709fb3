package gitlog

// The crash explorer, after SQLite's crash tests and the ALICE and CrashMonkey
// studies: each write path runs again and again on a copy of one repository,
// stopped at its first file-system operation, then its second, and so on until
// it runs to the end. A stop is a process killed there (what was done stays, a
// write in progress lands half) or, in power-loss mode, a machine that lost its
// power there (only what an fsync of the file, or of its folder for a name,
// made durable stays). After each: git fsck --strict must pass before memvault
// opens the repository; memvault opens it without a repair; every acknowledged
// write is there; gitlog's own check finds nothing wrong; a next write works.
//
// Folders are taken as durable once made: gitlog makes its folders at Init.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
)

var crashEvery = flag.Int("crash.every", 0, "explore every n-th crash point (0: every one, or every 5th with -short)")

var errCrashed = errors.New("crashed here")

type inode struct{ cur, dur []byte }

// crashDisk is a disk hook that stops everything at the limit-th operation and
// models what the disk would hold after a power loss there.
type crashDisk struct {
	mu        sync.Mutex
	root      string
	limit     int
	n         int
	crashed   bool
	powerLoss bool
	armed     bool              // counting: the write path runs
	cur, dur  map[string]*inode // by path
	handles   map[*os.File]*inode
	appending map[*os.File]bool
}

func newCrashDisk(t *testing.T, root string, limit int, powerLoss bool) *crashDisk {
	c := &crashDisk{root: root, limit: limit, powerLoss: powerLoss, cur: map[string]*inode{}, dur: map[string]*inode{},
		handles: map[*os.File]*inode{}, appending: map[*os.File]bool{}}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ino := &inode{cur: data, dur: bytes.Clone(data)}
		c.cur[p], c.dur[p] = ino, ino
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *crashDisk) hook(op disk.Op) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return errCrashed
	}
	if op.Kind != disk.Opened && c.armed {
		c.n++
		if c.n == c.limit {
			c.crashed = true
			if op.Kind == disk.Write && !c.powerLoss && len(op.Data) > 1 {
				// A write cut off midway by the kill lands in part.
				half := op.Data[:len(op.Data)/2]
				c.apply(disk.Op{Kind: disk.Write, F: op.F, Off: op.Off, Data: half})
				op.F.Write(half)
			}
			return errCrashed
		}
	}
	c.apply(op)
	return nil
}

func (c *crashDisk) apply(op disk.Op) {
	switch op.Kind {
	case disk.Create:
		if c.cur[op.Path] == nil {
			c.cur[op.Path] = &inode{}
		}
		if op.Flag&os.O_TRUNC != 0 {
			c.cur[op.Path].cur = nil
		}
	case disk.Opened:
		if c.cur[op.Path] == nil {
			c.cur[op.Path] = &inode{}
		}
		c.handles[op.F] = c.cur[op.Path]
		c.appending[op.F] = op.Flag&os.O_APPEND != 0
	case disk.Write:
		ino := c.handles[op.F]
		off := op.Off
		if c.appending[op.F] {
			off = int64(len(ino.cur))
		}
		if end := off + int64(len(op.Data)); end > int64(len(ino.cur)) {
			ino.cur = append(ino.cur, make([]byte, end-int64(len(ino.cur)))...)
		}
		copy(ino.cur[off:], op.Data)
	case disk.Truncate:
		ino := c.handles[op.F]
		if op.Size <= int64(len(ino.cur)) {
			ino.cur = ino.cur[:op.Size]
		} else {
			ino.cur = append(ino.cur, make([]byte, op.Size-int64(len(ino.cur)))...)
		}
	case disk.Sync, disk.Datasync:
		ino := c.handles[op.F]
		ino.dur = bytes.Clone(ino.cur)
	case disk.Rename:
		if ino := c.cur[op.Path]; ino != nil {
			c.cur[op.To] = ino
			delete(c.cur, op.Path)
		}
	case disk.Link:
		if ino := c.cur[op.Path]; ino != nil {
			c.cur[op.To] = ino
		}
	case disk.Remove:
		delete(c.cur, op.Path)
	case disk.SyncDir:
		for p := range c.cur {
			if filepath.Dir(p) == op.Path {
				c.dur[p] = c.cur[p]
			}
		}
		for p := range c.dur {
			if filepath.Dir(p) == op.Path && c.cur[p] == nil {
				delete(c.dur, p)
			}
		}
	}
}

// lose makes the disk what it would be after a power loss: only what was
// durable. A file the model does not know was written past the disk layer.
func (c *crashDisk) lose(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var files []string
	filepath.WalkDir(c.root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	for _, p := range files {
		if c.cur[p] == nil && c.dur[p] == nil {
			t.Errorf("%s was written past the disk layer", p)
		}
		os.Remove(p)
	}
	for p, ino := range c.dur {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, ino.dur, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writePath is one write path run on the repository r: it returns the head
// every acknowledged write left (the last one acknowledged), and whether a
// commit was in progress when it stopped: that commit, unacknowledged, may be
// there too, as a child of the acknowledged head.
// A writePath returns the commit it last had acknowledged, and, when it was
// stopped inside a commit, that commit's first parent: the stop may come after
// the commit's record reached the journal whole.
type writePath func(t *testing.T, r *Repo, dir string, d *disk.Disk) (acked, inProgress Hash)

// explore runs path on copies of the folder template makes, whose repository
// "r" path writes (others beside it are remotes), stopped at every crash point,
// in both modes, and returns how many states it checked. extra, if not nil,
// checks the rest of the folder after each stop.
func explore(t *testing.T, name string, template func(t *testing.T, dir string), path writePath, extra func(t *testing.T, where, folder string)) int {
	base := filepath.Join(t.TempDir(), "base")
	template(t, filepath.Join(base, "r"))
	every := *crashEvery
	if every == 0 {
		every = 1
		if testing.Short() {
			every = 5
		}
	}
	states := 0
	for _, powerLoss := range []bool{false, true} {
		for limit := 1; ; limit += every {
			folder := filepath.Join(t.TempDir(), "f")
			copyTree(t, base, folder)
			dir := filepath.Join(folder, "r")
			cd := newCrashDisk(t, folder, limit, powerLoss)
			d := &disk.Disk{Hook: cd.hook}
			r, err := openOn(d, dir)
			if err != nil {
				t.Fatal(err)
			}
			cd.mu.Lock()
			cd.armed = true
			cd.mu.Unlock()
			acked, inProgress := path(t, r, dir, d)
			// Close's own flush and merge are crash points too; after a
			// crash every operation fails, so it is as good as killed.
			// It also waits for the background packers, which use the disk.
			r.Close()
			cd.mu.Lock()
			crashed, n := cd.crashed, cd.n
			cd.mu.Unlock()
			if !crashed {
				t.Logf("%s, power loss %v: %d operations, %d crash states checked", name, powerLoss, n, (n+every-1)/every)
				break
			}
			if powerLoss {
				cd.lose(t)
			}
			where := fmt.Sprintf("%s, stopped at operation %d (power loss %v)", name, limit, powerLoss)
			checkAfterCrash(t, where, dir, acked, inProgress)
			if extra != nil {
				extra(t, where, folder)
			}
			states++
		}
	}
	return states
}

func checkAfterCrash(t *testing.T, where, dir string, acked, inProgress Hash) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("%s: git fsck before memvault opens: %v\n%s", where, err, out)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatalf("%s: open: %v", where, err)
	}
	defer r.Close()
	head, err := r.Head()
	if err != nil {
		t.Fatalf("%s: head: %v", where, err)
	}
	if head != acked {
		c, err := r.ReadCommit(head)
		if inProgress.IsZero() || err != nil || len(c.ParentHashes) == 0 || c.ParentHashes[0] != inProgress {
			t.Fatalf("%s: head %s, want the acknowledged %s (or the commit in progress, on %s)", where, head, acked, inProgress)
		}
	}
	if problems, err := r.Check(context.Background(), nil); err != nil || len(problems) > 0 {
		t.Fatalf("%s: check: %v %v", where, problems, err)
	}
	commit(t, r, Change{Op: Put, Path: "m/after", Data: []byte("after the crash")})
	flush(t, r)
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("%s: git fsck after the next write: %v\n%s", where, err, out)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if e.Name() == "config" {
			// A remote beside the repository is named by its path: the
			// copy's remote is the copy beside it.
			data = bytes.ReplaceAll(data, []byte(from), []byte(to))
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// baseRepo is a repository of three packed commits. Its folder m holds
// enough names that its versions are stored as deltas of one another when
// packs are merged, so that the merges explored write deltas; the two small
// packs after the first big one are merged with the next flush's.
func baseRepo(t *testing.T, dir string) {
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	seed := []Change{{Op: Put, Path: "m/a", Data: []byte("1")}}
	for i := range 40 {
		seed = append(seed, Change{Op: Put, Path: fmt.Sprintf("m/file-%02d", i), Data: []byte{byte(i)}})
	}
	commit(t, r, seed...)
	flush(t, r)
	commit(t, r, Change{Op: Put, Path: "m/b", Data: []byte("2")})
	flush(t, r)
	commit(t, r, Change{Op: Put, Path: "m/c", Data: []byte("3")})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// tryCommit is commit for a run that may crash: it reports the commit, or an
// error.
// besideRemote makes the base repository at dir and, beside it, a copy named
// name with one commit more (m/theirs), recorded in dir as remote origin and
// fetched when fetch is set.
func besideRemote(t *testing.T, dir, name string, fetch bool) {
	t.Helper()
	baseRepo(t, dir)
	other := filepath.Join(filepath.Dir(dir), name)
	copyTree(t, dir, other)
	s, err := Open(other)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, Change{Op: Put, Path: "m/theirs", Data: []byte("theirs")})
	s.Close()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddRemote("origin", other); err != nil {
		t.Fatal(err)
	}
	if fetch {
		if _, err := r.Fetch(context.Background(), "origin", TransferOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func tryCommit(r *Repo, changes ...Change) (Hash, error) {
	wl, err := r.Lock(context.Background())
	if err != nil {
		return ZeroHash, err
	}
	defer wl.Unlock()
	head, err := r.Head()
	if err != nil {
		return ZeroHash, err
	}
	return wl.Commit(context.Background(), head, changes, CommitInfo{Message: "m\n", Author: sig(), Committer: sig()})
}

func TestCrashExplorer(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	ctx := context.Background()
	counts := map[string]int{}

	// Commits, the flush that packs them, and the merge of packs that Close
	// makes when they accumulate.
	counts["commit, flush, merge"] = explore(t, "commit, flush, merge", baseRepo, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		for i := range 3 {
			h, err := tryCommit(r, Change{Op: Put, Path: fmt.Sprintf("m/c%d", i), Data: []byte{byte(i)}})
			if err != nil {
				// Stopped inside this commit: its record may have reached
				// the journal whole.
				return acked, acked
			}
			acked = h
		}
		r.Flush(ctx)
		if unlock, ok, _ := r.packLock(ctx, "pack-merge.lock", false); ok {
			r.consolidate(ctx)
			unlock()
		}
		return acked, ZeroHash
	}, nil)

	// gc: loose objects that git wrote, the journal, and the merge of packs.
	counts["gc"] = explore(t, "gc", func(t *testing.T, dir string) {
		baseRepo(t, dir)
		cmd := exec.Command("git", "--git-dir", dir, "hash-object", "-w", "--stdin")
		cmd.Stdin = bytes.NewReader([]byte("a loose object git wrote\n"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git hash-object: %v\n%s", err, out)
		}
	}, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		h, err := tryCommit(r, Change{Op: Put, Path: "m/gc", Data: []byte("before gc")})
		if err != nil {
			return acked, acked
		}
		r.Pack(ctx)
		return h, ZeroHash
	}, nil)

	// A fetch from a local-path remote: the pack received, and the remote's
	// ref moved through the journal.
	counts["fetch"] = explore(t, "fetch", func(t *testing.T, dir string) {
		besideRemote(t, dir, "src", false)
	}, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		r.Fetch(ctx, "origin", TransferOptions{})
		r.Flush(ctx)
		return acked, ZeroHash
	}, nil)

	// A commit larger than the journal's flush threshold, as an import
	// makes: the flush runs inside the commit, after its record is synced.
	big := make([]byte, journal.FlushBytes+1<<20)
	rand.Read(big)
	counts["large commit"] = explore(t, "large commit", baseRepo, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		h, err := tryCommit(r, Change{Op: Put, Path: "m/import", Data: big})
		if err != nil {
			return acked, acked
		}
		return h, ZeroHash
	}, nil)

	// An import: its blobs streamed into a pack of their own (BlobPack), then
	// one commit linking them, whose trees go into a second pack (CommitInfo.Packed).
	counts["import pack"] = explore(t, "import pack", baseRepo, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		wl, err := r.Lock(ctx)
		if err != nil {
			return acked, ZeroHash
		}
		defer wl.Unlock()
		bp, err := wl.NewBlobPack(ctx, 3)
		if err != nil {
			return acked, ZeroHash
		}
		var changes []Change
		for i := range 3 {
			h, err := bp.Add([]byte(fmt.Sprintf("imported file %d\n", i)))
			if err != nil {
				bp.Abort()
				return acked, ZeroHash
			}
			changes = append(changes, Change{Op: Link, Path: fmt.Sprintf("m/i%d", i), Hash: h})
		}
		if bp.Finish() != nil {
			return acked, ZeroHash
		}
		h, err := wl.Commit(ctx, acked, changes, CommitInfo{Message: "import\n", Author: sig(), Committer: sig(), Packed: true})
		if err != nil {
			return acked, acked // stopped inside the commit: its record may be whole
		}
		return h, ZeroHash
	}, nil)

	// A tag (a checkpoint) and a remote added and removed: the tag's ref
	// through the journal, the config by rename.
	counts["tag, remote"] = explore(t, "tag, remote", baseRepo, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		wl, err := r.Lock(ctx)
		if err != nil {
			return acked, ZeroHash
		}
		_, err = wl.CreateTag("before", acked, sig(), "a checkpoint")
		wl.Unlock()
		if err != nil {
			return acked, ZeroHash
		}
		if r.AddRemote("elsewhere", "https://example.com/v.git") != nil {
			return acked, ZeroHash
		}
		r.RemoveRemote("elsewhere")
		r.Flush(ctx)
		return acked, ZeroHash
	}, func(t *testing.T, where, folder string) {
		out, err := exec.Command("git", "--git-dir", filepath.Join(folder, "r"), "config", "--list").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: git reads the config: %v\n%s", where, err, out)
		}
	})

	// A sync's merge committed on the remote's branch alone (CommitInfo.Parents of theirs alone):
	// one move of the branch from this clone's own commit to a commit whose
	// parent is the fetched one.
	counts["squash"] = explore(t, "squash", func(t *testing.T, dir string) {
		besideRemote(t, dir, "src", true)
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		commit(t, r, Change{Op: Put, Path: "m/ours", Data: []byte("ours")})
		r.Close()
	}, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		theirs, err := r.Ref(RemoteRef("origin"))
		if err != nil {
			t.Fatal(err)
		}
		wl, err := r.Lock(ctx)
		if err != nil {
			return acked, ZeroHash
		}
		h, err := wl.Commit(context.Background(), acked, []Change{{Op: Put, Path: "m/theirs", Data: []byte("theirs")}},
			CommitInfo{Message: "merge\n", Author: sig(), Committer: sig(), Parents: []Hash{theirs}})
		wl.Unlock()
		if err != nil {
			return acked, theirs // its record may have reached the journal whole
		}
		r.Flush(ctx)
		return h, ZeroHash
	}, nil)

	// A merge of another clone's commit, pushed into a local-path vault: the
	// target is written through the same disk, so it crashes too.
	counts["merge, push to a local path"] = explore(t, "merge, push to a local path", func(t *testing.T, dir string) {
		besideRemote(t, dir, "dst", true)
	}, func(t *testing.T, r *Repo, dir string, d *disk.Disk) (Hash, Hash) {
		localDisk = d
		defer func() { localDisk = disk.OS }()
		acked, _ := r.Head()
		theirs, err := r.Ref(RemoteRef("origin"))
		if err != nil {
			t.Fatal(err)
		}
		ours, _ := r.RootTree(acked)
		wl, err := r.Lock(ctx)
		if err != nil {
			return acked, ZeroHash
		}
		theirsRoot, _ := r.RootTree(theirs)
		e, err := r.Lookup(theirsRoot, "m/theirs")
		if err != nil {
			t.Fatal(err)
		}
		root, err := r.ReplaceEntries(ctx, ours, []Replacement{{Names: []string{"m", "theirs"}, Entry: &e}})
		if err != nil {
			wl.Unlock()
			return acked, ZeroHash
		}
		m, err := wl.Commit(context.Background(), acked, nil, CommitInfo{Message: "merge\n", Author: sig(), Committer: sig(), Parents: []Hash{acked, theirs}, Tree: root})
		wl.Unlock()
		if err != nil {
			return acked, acked
		}
		if err := r.Push(ctx, "origin", m, TransferOptions{}); err != nil && !strings.Contains(err.Error(), errCrashed.Error()) {
			t.Fatalf("push: %v", err)
		}
		return m, ZeroHash
	}, func(t *testing.T, where, folder string) {
		dst := filepath.Join(folder, "dst")
		if out, err := exec.Command("git", "--git-dir", dst, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
			t.Fatalf("%s: git fsck of the push's target: %v\n%s", where, err, out)
		}
		o, err := Open(dst)
		if err != nil {
			t.Fatalf("%s: open the push's target: %v", where, err)
		}
		defer o.Close()
		if problems, err := o.Check(context.Background(), nil); err != nil || len(problems) > 0 {
			t.Fatalf("%s: check of the push's target: %v %v", where, problems, err)
		}
	})

	// The caller's record files (ReplaceRecords, AppendRecords) and a reflog
	// of version 1 written again as version 2 by the next commit: a record
	// file holds the records of its last acknowledged replace, and maybe
	// appends after it, never anything else; the reflog keeps every move.
	rf := RecordFile{Name: "crash-records", Kind: "crash", Version: 1, Tag: "MVCR"}
	var replaced []string // what the last acknowledged ReplaceRecords wrote
	var moves []RefMove   // the reflog's moves before the path
	counts["record files, reflog"] = explore(t, "record files, reflog", func(t *testing.T, dir string) {
		baseRepo(t, dir)
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := r.RefLog()
		r.Close()
		if err != nil || len(ms) == 0 {
			t.Fatalf("RefLog of the base = %v, %v", ms, err)
		}
		v1 := "memvault reflog v1\n"
		for _, m := range ms {
			v1 += reflogV1Line(m)
		}
		if err := os.WriteFile(filepath.Join(dir, stateDir, reflogName), []byte(v1), 0o600); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		replaced = nil
		moves, _ = r.RefLog()
		acked, _ := r.Head()
		if r.ReplaceRecords(rf, [][]byte{[]byte("a"), []byte("b")}) == nil {
			replaced = []string{"a", "b"}
		}
		r.AppendRecords(rf, []byte("c"))
		if r.ReplaceRecords(rf, [][]byte{[]byte("d")}) == nil {
			replaced = []string{"d"}
		}
		h, err := tryCommit(r, Change{Op: Put, Path: "m/after-records", Data: []byte("x")})
		if err != nil {
			return acked, acked
		}
		return h, ZeroHash
	}, func(t *testing.T, where, folder string) {
		r, err := Open(filepath.Join(folder, "r"))
		if err != nil {
			t.Fatalf("%s: open: %v", where, err)
		}
		defer r.Close()
		recs, err := r.ReadRecords(rf)
		if err != nil {
			t.Fatalf("%s: ReadRecords: %v", where, err)
		}
		got := make([]string, len(recs))
		for i, b := range recs {
			got[i] = string(b)
		}
		// What may be there, after each point of the path: a replace that
		// was not acknowledged may have landed, an append may be lost.
		allowed := map[string][][]string{
			"":    {nil, {"a", "b"}},
			"a b": {{"a", "b"}, {"a", "b", "c"}, {"d"}},
			"d":   {{"d"}},
		}[strings.Join(replaced, " ")]
		if !slices.ContainsFunc(allowed, func(a []string) bool { return slices.Equal(a, got) }) {
			t.Fatalf("%s: the record file holds %q; its last acknowledged replace wrote %q", where, got, replaced)
		}
		ms, err := r.RefLog()
		if err != nil || len(ms) < len(moves) {
			t.Fatalf("%s: RefLog = %d moves, %v; want at least the %d before", where, len(ms), err, len(moves))
		}
		for i := range moves {
			if ms[i].New != moves[i].New || !ms[i].When.Equal(moves[i].When) {
				t.Fatalf("%s: reflog move %d is %+v, was %+v", where, i, ms[i], moves[i])
			}
		}
	})

	// A line of commits beside the branch (a review's pending changes): the
	// line's ref created, moved by commits of its own and by a merge of the
	// branch, while the branch moves too; every move through the journal.
	const line = "refs/memvault/pending"
	var lineAcked, lineInProgress Hash
	counts["a line beside the branch"] = explore(t, "a line beside the branch", baseRepo, func(t *testing.T, r *Repo, dir string, _ *disk.Disk) (Hash, Hash) {
		acked, _ := r.Head()
		lineAcked, lineInProgress = ZeroHash, ZeroHash
		onLine := func(parent Hash, merge Hash, data string) error {
			wl, err := r.Lock(ctx)
			if err != nil {
				return err
			}
			defer wl.Unlock()
			lineInProgress = parent
			info := CommitInfo{Message: "pending\n", Author: sig(), Committer: sig(), Ref: line, From: lineAcked}
			ch := []Change{{Op: Put, Path: "m/pending", Data: []byte(data)}}
			var h Hash
			if merge.IsZero() {
				h, err = wl.Commit(context.Background(), parent, ch, info)
			} else {
				info.Parents = []Hash{parent, merge}
				h, err = wl.Commit(context.Background(), parent, ch, info)
			}
			if err != nil {
				return err
			}
			lineAcked, lineInProgress = h, ZeroHash
			return nil
		}
		if onLine(acked, ZeroHash, "one") != nil || onLine(lineAcked, ZeroHash, "two") != nil {
			return acked, ZeroHash
		}
		h, err := tryCommit(r, Change{Op: Put, Path: "m/main", Data: []byte("main moved")})
		if err != nil {
			return acked, acked
		}
		acked = h
		if onLine(lineAcked, acked, "merged") != nil {
			return acked, ZeroHash
		}
		r.Flush(ctx)
		return acked, ZeroHash
	}, func(t *testing.T, where, folder string) {
		r, err := Open(filepath.Join(folder, "r"))
		if err != nil {
			t.Fatalf("%s: open: %v", where, err)
		}
		defer r.Close()
		got, err := r.Ref(line)
		if err != nil {
			t.Fatalf("%s: read the line: %v", where, err)
		}
		if got == lineAcked {
			return
		}
		if c, err := r.ReadCommit(got); lineInProgress.IsZero() || err != nil || c.ParentHashes[0] != lineInProgress {
			t.Fatalf("%s: the line holds %s, want the acknowledged %s (or the commit in progress, on %s)", where, got, lineAcked, lineInProgress)
		}
	})

	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("crash states explored, %s: %d, 0 violations", n, counts[n])
	}
}
