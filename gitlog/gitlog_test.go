package gitlog

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
)

func sig() Signature { return Signature{Name: "t", Email: "t@example", When: time.Unix(1700000000, 0)} }

func commit(t testing.TB, r *Repo, changes ...Change) Hash {
	t.Helper()
	wl, err := r.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Unlock()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	h, err := wl.Commit(context.Background(), head, changes, CommitInfo{Message: "m\n", Author: sig(), Committer: sig()})
	if err != nil {
		t.Fatalf("Commit(%v): %v", changes, err)
	}
	return h
}

// flush puts the journal's objects into a pack, for git to see them.
func flush(t *testing.T, r *Repo) {
	t.Helper()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, r *Repo, p string) (string, error) {
	t.Helper()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	root, err := r.RootTree(head)
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.Lookup(root, p)
	if err != nil {
		return "", err
	}
	b, err := r.ReadBlob(e.Hash)
	return string(b), err
}

func TestCommitChanges(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	commit(t, r, Change{Op: Put, Path: "m/a/b.txt", Data: []byte("one")}, Change{Op: Put, Path: "m/c.txt", Data: []byte("two")})
	commit(t, r, Change{Op: Move, Path: "m/a", NewPath: "m/x/y"})
	if got, err := read(t, r, "m/x/y/b.txt"); err != nil || got != "one" {
		t.Errorf("after move, read m/x/y/b.txt = %q, %v; want one", got, err)
	}
	if _, err := read(t, r, "m/a/b.txt"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after move, read m/a/b.txt: err = %v, want ErrNotFound", err)
	}
	commit(t, r, Change{Op: Delete, Path: "m/x/y/b.txt"})
	head, _ := r.Head()
	root, _ := r.RootTree(head)
	if _, err := r.Lookup(root, "m/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("emptied directory m/x still there: %v", err)
	}
	wl, _ := r.Lock(context.Background())
	_, err = wl.Commit(context.Background(), head, []Change{{Op: Put, Path: "m/c.txt/d", Data: nil}}, CommitInfo{Author: sig(), Committer: sig()})
	wl.Unlock()
	if !errors.Is(err, ErrNotDir) {
		t.Errorf("put under a file: err = %v, want ErrNotDir", err)
	}
	if h2, _ := r.Head(); h2 != head {
		t.Errorf("failed commit moved the branch")
	}
	flush(t, r)
	// git itself must find the repository sound.
	if out, err := exec.Command("git", "-C", r.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	out, err := exec.Command("git", "-C", r.Dir(), "log", "--format=%s", "main").Output()
	if err != nil || strings.Count(string(out), "m\n") != 3 {
		t.Errorf("git log = %q, %v; want 3 commits", out, err)
	}
}

func TestStaleParent(t *testing.T) {
	r, _ := Init(t.TempDir())
	commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	wl, _ := r.Lock(context.Background())
	defer wl.Unlock()
	_, err := wl.Commit(context.Background(), ZeroHash, []Change{{Op: Put, Path: "b", Data: []byte("2")}}, CommitInfo{Author: sig(), Committer: sig()})
	if !errors.Is(err, ErrStale) {
		t.Errorf("Commit on an old parent: err = %v, want ErrStale", err)
	}
}

// TestLockWaitEndsWithContext: Lock waits until the lock is free or
// ctx is done, whether another process (here another opening) or another
// goroutine of this one holds it; once it is free, Lock takes it.
func TestLockWaitEndsWithContext(t *testing.T) {
	dir := t.TempDir()
	r1, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	held, err := r1.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    *Repo
	}{{"another opening", r2}, {"another goroutine", r1}} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		w, err := tc.r.Lock(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			if w != nil {
				w.Unlock()
			}
			t.Errorf("Lock while %s holds the lock = %v, want an error wrapping context.DeadlineExceeded", tc.name, err)
		}
	}
	held.Unlock()
	for _, r := range []*Repo{r1, r2} {
		w, err := r.Lock(context.Background())
		if err != nil {
			t.Fatalf("Lock once free = %v", err)
		}
		w.Unlock()
	}
}

func TestLockSerialisesRepos(t *testing.T) {
	dir := t.TempDir()
	r1, _ := Init(dir)
	r2, _ := Open(dir)
	var wg sync.WaitGroup
	for i, r := range []*Repo{r1, r2, r1, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				commit(t, r, Change{Op: Put, Path: filepath.Join("d", string(rune('a'+i)), string(rune('a'+j))), Data: []byte{byte(j)}})
			}
		}()
	}
	wg.Wait()
	n := 0
	head, _ := r1.Head()
	r1.walkAll(head, func(*Commit) error { n++; return nil })
	if n != 100 {
		t.Errorf("%d commits, want 100", n)
	}
}

// TestReplayAfterCrash simulates a machine crash after the journal was synced but
// before its objects were packed or the ref's new value reached the disk: the
// checkReplayed opens dir, which a crash left with its journal to replay, and
// checks that the branch is at head, b/c reads "2" and git finds it sound.
func checkReplayed(t *testing.T, dir string, head Hash) {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h, _ := r.Head(); h != head {
		t.Errorf("after replay, head = %s, want %s", h, head)
	}
	if got, err := read(t, r, "b/c"); err != nil || got != "2" {
		t.Errorf("after replay, read b/c = %q, %v", got, err)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck after replay: %v\n%s", err, out)
	}
}

// ref is old, and the journal says it was written in another boot.
func TestReplayAfterCrash(t *testing.T) {
	dir := t.TempDir()
	r, _ := Init(dir)
	first := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	second := commit(t, r, Change{Op: Put, Path: "b/c", Data: []byte("2")})
	r.abandon()
	data, err := os.ReadFile(r.journalPath())
	if err != nil {
		t.Fatal(err)
	}
	_, recs, _ := journal.Read(data)
	if len(recs) != 2 {
		t.Fatalf("journal holds %d records, want 2", len(recs))
	}
	data = []byte(strings.Replace(string(data), "boot "+disk.BootID(), "boot "+strings.Repeat("x", len(disk.BootID())), 1))
	os.WriteFile(r.journalPath(), data, 0o600)
	os.WriteFile(filepath.Join(dir, "refs/heads/main"), []byte(first.String()+"\n"), 0o644)

	checkReplayed(t, dir, second)
	data, _ = os.ReadFile(r.journalPath())
	if _, recs, _ := journal.Read(data); len(recs) != 0 {
		t.Errorf("journal not emptied after replay: %d records", len(recs))
	}
}

func TestCheckAndRepair(t *testing.T) {
	dir := t.TempDir()
	r, _ := Init(dir)
	commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	good := commit(t, r, Change{Op: Put, Path: "m/b", Data: []byte("2")})
	var heads []string
	problems, err := r.Check(context.Background(), func(p string, _ Hash, head bool) {
		if head {
			heads = append(heads, p)
		}
	})
	if err != nil || len(problems) != 0 {
		t.Fatalf("Check on a sound repository = %v, %v", problems, err)
	}
	if strings.Join(heads, " ") != "m/a m/b" {
		t.Errorf("Check visited head blobs %v, want m/a m/b", heads)
	}
	// A commit whose blob is missing, as a broken copy or disk might leave it,
	// made by git itself.
	flush(t, r)
	git := func(stdin string, args ...string) string {
		t.Helper()
		// commit-tree needs an identity, which a machine with no git config lacks.
		cmd := exec.Command("git", append([]string{"--git-dir", dir, "-c", "user.name=test", "-c", "user.email=test@example.invalid"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	a, _ := r.Lookup(mustTree(t, r, good), "m/a")
	b, _ := r.Lookup(mustTree(t, r, good), "m/b")
	missing := git("3", "hash-object", "--stdin") // not written
	sub := git(fmt.Sprintf("100644 blob %s\ta\n100644 blob %s\tb\n100644 blob %s\tc\n", a.Hash, b.Hash, missing), "mktree", "--missing")
	root := git("040000 tree "+sub+"\tm\n", "mktree")
	bad := git("", "commit-tree", root, "-p", good.String(), "-m", "bad")
	git("", "update-ref", string(Branch), bad)
	problems, err = r.Check(context.Background(), nil)
	if err != nil || len(problems) != 1 || problems[0].Object.String() != missing {
		t.Fatalf("Check with a missing blob = %v, %v; want one problem naming %s", problems, err, missing)
	}
	// A corrupt ref.
	os.WriteFile(filepath.Join(dir, "refs/heads/main"), []byte("garbage\n"), 0o644)
	if problems, err = r.Check(context.Background(), nil); err != nil || len(problems) != 1 {
		t.Fatalf("Check with a corrupt ref = %v, %v; want one problem", problems, err)
	}
	wl, _ := r.Lock(context.Background())
	fixed, err := wl.Repair(context.Background())
	wl.Unlock()
	if err != nil || fixed != good {
		t.Fatalf("Repair = %s, %v; want %s", fixed, err, good)
	}
	if problems, err = r.Check(context.Background(), nil); err != nil || len(problems) != 0 {
		t.Errorf("after Repair, Check = %v, %v; want no problems", problems, err)
	}
}

func mustTree(t *testing.T, r *Repo, c Hash) Hash {
	t.Helper()
	h, err := r.RootTree(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// abandon lets r go as a killed process would: its files closed, nothing
// flushed.
func (r *Repo) abandon() {
	r.stopBackground()
	r.closeFiles()
}

// TestReplayOldJournal replays the journal an older memvault left in a machine
// crash: format v1, whose records hold each object as its loose file's bytes.
func TestReplayOldJournal(t *testing.T) {
	dir := t.TempDir()
	r, _ := Init(dir)
	first := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	flush(t, r)
	second := commit(t, r, Change{Op: Put, Path: "b/c", Data: []byte("2")})
	r.abandon()
	data, _ := os.ReadFile(r.journalPath())
	_, recs, _ := journal.Read(data)
	if len(recs) != 1 {
		t.Fatalf("journal holds %d records, want 1", len(recs))
	}
	// The record as the older build wrote it.
	var p bytes.Buffer
	p.Write(recs[0].Old[:])
	p.Write(recs[0].New[:])
	binary.Write(&p, binary.BigEndian, uint32(len(recs[0].Objects)))
	for _, o := range recs[0].Objects {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		fmt.Fprintf(zw, "%s %d\x00", o.Type, len(o.Data))
		zw.Write(o.Data)
		zw.Close()
		p.Write(o.Hash[:])
		binary.Write(&p, binary.BigEndian, uint32(z.Len()))
		p.Write(z.Bytes())
	}
	old := []byte("memvault journal v1\nboot another\n")
	old = append(old, "MVJR"...)
	old = binary.BigEndian.AppendUint32(old, uint32(p.Len()))
	old = binary.BigEndian.AppendUint32(old, crc32.Checksum(p.Bytes(), castagnoli))
	old = append(old, p.Bytes()...)
	os.WriteFile(r.journalPath(), old, 0o600)
	os.WriteFile(filepath.Join(dir, "refs/heads/main"), []byte(first.String()+"\n"), 0o644)

	checkReplayed(t, dir, second)
}

// TestJournalWithoutHeader: a writer killed as it started the journal over
// leaves it empty, without its header. The next commit must still be readable
// by another process, which reads the journal only under a whole header.
func TestJournalWithoutHeader(t *testing.T) {
	dir := t.TempDir()
	w, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	commit(t, w, Change{Op: Put, Path: "a", Data: []byte("1")})
	flush(t, w)
	if err := os.Truncate(w.journalPath(), 0); err != nil {
		t.Fatal(err)
	}
	h := commit(t, w, Change{Op: Put, Path: "a", Data: []byte("2")})
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if head, _ := r.Head(); head != h {
		t.Fatalf("head = %s, want %s", head, h)
	}
	if got, err := read(t, r, "a"); err != nil || got != "2" {
		t.Errorf("another process reads a = %q, %v; want \"2\"", got, err)
	}
}

// TestFetchFindsJournal: a fetch asks for the remote's main only when the
// repository lacks it; a commit still in the journal (this process's or
// another's) counts, or the fetch downloads again what is here.
func TestFetchFindsJournal(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	w, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dst, err := Init(other)
	if err != nil {
		t.Fatal(err)
	}
	dst.Close()
	h := commit(t, w, Change{Op: Put, Path: "a", Data: []byte("1")})
	if err := w.AddRemote("origin", other); err != nil {
		t.Fatal(err)
	}
	if err := w.Push(context.Background(), "origin", h, TransferOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	packs := func() int {
		names, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
		return len(names)
	}
	before := packs()
	for name, repo := range map[string]*Repo{"writer": w, "other process": r} {
		got, err := repo.Fetch(context.Background(), "origin", TransferOptions{})
		if err != nil || got != h {
			t.Errorf("%s: Fetch = %s, %v; want %s", name, got, err, h)
		}
	}
	if n := packs(); n != before {
		t.Errorf("fetching a commit the journal holds wrote %d packs", n-before)
	}
}
