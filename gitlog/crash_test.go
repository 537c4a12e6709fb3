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
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

var crashEvery = flag.Int("crash.every", 0, "explore every n-th crash point (0: every one, or every 3rd with -short)")

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

func (c *crashDisk) hook(op diskOp) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return errCrashed
	}
	if op.kind != opOpened && c.armed {
		c.n++
		if c.n == c.limit {
			c.crashed = true
			if op.kind == opWrite && !c.powerLoss && len(op.data) > 1 {
				// A write cut off midway by the kill lands in part.
				half := op.data[:len(op.data)/2]
				c.apply(diskOp{kind: opWrite, f: op.f, off: op.off, data: half})
				op.f.Write(half)
			}
			return errCrashed
		}
	}
	c.apply(op)
	return nil
}

func (c *crashDisk) apply(op diskOp) {
	switch op.kind {
	case opCreate:
		if c.cur[op.path] == nil {
			c.cur[op.path] = &inode{}
		}
		if op.flag&os.O_TRUNC != 0 {
			c.cur[op.path].cur = nil
		}
	case opOpened:
		if c.cur[op.path] == nil {
			c.cur[op.path] = &inode{}
		}
		c.handles[op.f] = c.cur[op.path]
		c.appending[op.f] = op.flag&os.O_APPEND != 0
	case opWrite:
		ino := c.handles[op.f]
		off := op.off
		if c.appending[op.f] {
			off = int64(len(ino.cur))
		}
		if end := off + int64(len(op.data)); end > int64(len(ino.cur)) {
			ino.cur = append(ino.cur, make([]byte, end-int64(len(ino.cur)))...)
		}
		copy(ino.cur[off:], op.data)
	case opTruncate:
		ino := c.handles[op.f]
		if op.size <= int64(len(ino.cur)) {
			ino.cur = ino.cur[:op.size]
		} else {
			ino.cur = append(ino.cur, make([]byte, op.size-int64(len(ino.cur)))...)
		}
	case opSync, opDatasync:
		ino := c.handles[op.f]
		ino.dur = bytes.Clone(ino.cur)
	case opRename:
		if ino := c.cur[op.path]; ino != nil {
			c.cur[op.to] = ino
			delete(c.cur, op.path)
		}
	case opLink:
		if ino := c.cur[op.path]; ino != nil {
			c.cur[op.to] = ino
		}
	case opRemove:
		delete(c.cur, op.path)
	case opSyncDir:
		for p := range c.cur {
			if filepath.Dir(p) == op.path {
				c.dur[p] = c.cur[p]
			}
		}
		for p := range c.dur {
			if filepath.Dir(p) == op.path && c.cur[p] == nil {
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
type writePath func(t *testing.T, r *Repo, dir string) (acked Hash, inProgress bool)

// explore runs path on copies of the repository template makes, stopped at
// every crash point, in both modes, and returns how many states it checked.
func explore(t *testing.T, name string, template func(t *testing.T, dir string), path writePath) int {
	base := filepath.Join(t.TempDir(), "base")
	template(t, base)
	every := *crashEvery
	if every == 0 {
		every = 1
		if testing.Short() {
			every = 3
		}
	}
	states := 0
	for _, powerLoss := range []bool{false, true} {
		for limit := 1; ; limit += every {
			dir := filepath.Join(t.TempDir(), "r")
			copyTree(t, base, dir)
			cd := newCrashDisk(t, dir, limit, powerLoss)
			r, err := openOn(&disk{hook: cd.hook}, dir)
			if err != nil {
				t.Fatal(err)
			}
			cd.mu.Lock()
			cd.armed = true
			cd.mu.Unlock()
			acked, inProgress := path(t, r, dir)
			if !cd.crashed {
				r.Close()
				t.Logf("%s, power loss %v: %d operations, %d crash states checked", name, powerLoss, cd.n, (cd.n+every-1)/every)
				break
			}
			r.Close() // every operation now fails: as good as killed
			if powerLoss {
				cd.lose(t)
			}
			checkAfterCrash(t, fmt.Sprintf("%s, stopped at operation %d (power loss %v)", name, limit, powerLoss), dir, acked, inProgress)
			states++
		}
	}
	return states
}

func checkAfterCrash(t *testing.T, where, dir string, acked Hash, inProgress bool) {
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
		if !inProgress || err != nil || len(c.ParentHashes) != 1 || c.ParentHashes[0] != acked {
			t.Fatalf("%s: head %s, want the acknowledged %s (or a child of it in progress)", where, head, acked)
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
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// baseRepo is a repository of two packed commits.
func baseRepo(t *testing.T, dir string) {
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	flush(t, r)
	commit(t, r, Change{Op: Put, Path: "m/b", Data: []byte("2")})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// tryCommit is commit for a run that may crash: it reports the commit, or an
// error.
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
	return wl.Commit(head, changes, CommitInfo{Message: "m\n", Author: sig(), Committer: sig()})
}

func TestCrashExplorer(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary for the oracle")
	}
	ctx := context.Background()
	counts := map[string]int{}

	// Commits, the flush that packs them, and the merge of packs that Close
	// makes when they accumulate.
	counts["commit, flush, merge"] = explore(t, "commit, flush, merge", baseRepo, func(t *testing.T, r *Repo, dir string) (Hash, bool) {
		acked, _ := r.Head()
		for i := range 3 {
			h, err := tryCommit(r, Change{Op: Put, Path: fmt.Sprintf("m/c%d", i), Data: []byte{byte(i)}})
			if err != nil {
				// Stopped inside this commit: its record may have reached
				// the journal whole.
				return acked, true
			}
			acked = h
		}
		r.Flush(ctx)
		if unlock, ok, _ := r.packLock(ctx, "pack-merge.lock", false); ok {
			r.consolidate(ctx)
			unlock()
		}
		return acked, false
	})

	// gc: loose objects that git wrote, the journal, and the merge of packs.
	counts["gc"] = explore(t, "gc", func(t *testing.T, dir string) {
		baseRepo(t, dir)
		cmd := exec.Command("git", "--git-dir", dir, "hash-object", "-w", "--stdin")
		cmd.Stdin = bytes.NewReader([]byte("a loose object git wrote\n"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git hash-object: %v\n%s", err, out)
		}
	}, func(t *testing.T, r *Repo, dir string) (Hash, bool) {
		acked, _ := r.Head()
		h, err := tryCommit(r, Change{Op: Put, Path: "m/gc", Data: []byte("before gc")})
		if err != nil {
			return acked, true
		}
		r.Pack(ctx)
		return h, false
	})

	// A fetch from a local-path remote: the pack received, and the remote's
	// ref moved through the journal.
	counts["fetch"] = explore(t, "fetch", func(t *testing.T, dir string) {
		baseRepo(t, dir)
		src := dir + ".src"
		copyTree(t, dir, src)
		s, err := Open(src)
		if err != nil {
			t.Fatal(err)
		}
		commit(t, s, Change{Op: Put, Path: "m/remote", Data: []byte("from the remote")})
		s.Close()
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.AddRemote("origin", src); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}, func(t *testing.T, r *Repo, dir string) (Hash, bool) {
		acked, _ := r.Head()
		r.Fetch(ctx, "origin", TransferOptions{})
		r.Flush(ctx)
		return acked, false
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
