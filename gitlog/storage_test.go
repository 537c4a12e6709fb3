package gitlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gitFsck runs git fsck --strict on the repository at dir.
func gitFsck(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", dir, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// TestGitReadsBetweenWrites: the branch git reads never points past what git
// can read, with no pause, flush or close between the writes.
func TestGitReadsBetweenWrites(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var last Hash
	for i := range 5 {
		last = commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte{byte('0' + i)}})
		gitFsck(t, dir)
	}
	if head, _ := r.Head(); head != last {
		t.Fatalf("memvault reads head %s, want its last commit %s", head, last)
	}
	flush(t, r)
	out, err := exec.Command("git", "--git-dir", dir, "rev-parse", "refs/heads/main").Output()
	if err != nil || string(bytes.TrimSpace(out)) != last.String() {
		t.Fatalf("after a flush git reads main = %s (%v), want %s", out, err, last)
	}
	gitFsck(t, dir)
}

// TestMergeKeepsItsOutput: two packs of the same objects (a flush repeated
// after a crash) merge into a pack with the name of one of them, byte for
// byte; the merge must not delete it as one of its inputs.
func TestMergeKeepsItsOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")}, Change{Op: Put, Path: "m/b", Data: []byte("2")})
	objs, _, _ := r.jobjs.Snapshot()
	if err := r.packObjects(ctx, objs); err != nil {
		t.Fatal(err)
	}
	// The same objects in the other order: another pack, of the same size.
	for i, j := 0, len(objs)-1; i < j; i, j = i+1, j-1 {
		objs[i], objs[j] = objs[j], objs[i]
	}
	if err := r.packObjects(ctx, objs); err != nil {
		t.Fatal(err)
	}
	flush(t, r)
	if packs, _ := r.listPacks(); len(packs) < 2 {
		t.Fatalf("%d packs, want at least 2", len(packs))
	}
	if err := r.consolidate(ctx); err != nil {
		t.Fatal(err)
	}
	packs, _ := r.listPacks()
	if len(packs) != 1 {
		t.Fatalf("after the merge, %d packs, want 1", len(packs))
	}
	o, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got, err := read(t, o, "m/b"); err != nil || got != "2" {
		t.Fatalf("after the merge, m/b = %q, %v", got, err)
	}
	if h, _ := o.Head(); h != head {
		t.Fatalf("head %s, want %s", h, head)
	}
	gitFsck(t, dir)
}

// TestNewerJournalLeftAlone: a journal whose header or record this build does
// not know was written by a newer memvault. A commit refuses, saying to
// upgrade, and leaves the journal byte for byte as it was.
func TestNewerJournalLeftAlone(t *testing.T) {
	unknownRecord := func(t *testing.T) []byte {
		p := []byte("a record of a kind to come")
		rec := make([]byte, 12)
		copy(rec, "MVJZ")
		binary.BigEndian.PutUint32(rec[4:], uint32(len(p)))
		binary.BigEndian.PutUint32(rec[8:], crc32.Checksum(p, castagnoli))
		return append(rec, p...)
	}
	for _, tc := range []struct {
		name    string
		journal func(t *testing.T, old []byte) []byte
	}{
		{"header v3", func(t *testing.T, old []byte) []byte {
			return append([]byte("memvault journal v3\nwhatever it holds\n"), unknownRecord(t)...)
		}},
		{"record of an unknown kind", func(t *testing.T, old []byte) []byte {
			return append(old, unknownRecord(t)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r, err := Init(dir)
			if err != nil {
				t.Fatal(err)
			}
			commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
			old, err := os.ReadFile(r.journalPath())
			if err != nil {
				t.Fatal(err)
			}
			r.abandon()
			newer := tc.journal(t, old)
			if err := os.WriteFile(r.journalPath(), newer, 0o600); err != nil {
				t.Fatal(err)
			}
			o, err := Open(dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			wl, err := o.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			head, _ := o.Head()
			_, err = wl.Commit(context.Background(), head, []Change{{Op: Put, Path: "m/b", Data: []byte("2")}}, CommitInfo{Message: "m\n", Author: sig(), Committer: sig()})
			wl.Unlock()
			if !errors.Is(err, ErrNewerFormat) {
				t.Errorf("Commit over a newer journal = %v, want ErrNewerFormat", err)
			}
			o.Close()
			if got, _ := os.ReadFile(r.journalPath()); !bytes.Equal(got, newer) {
				t.Errorf("the newer journal was rewritten:\n%q\nwant\n%q", got, newer)
			}
		})
	}
}

// TestOpenRemovesLeftovers: the temporary files a writer killed before it put
// them in place are removed at the next open, unless a live writer holds the
// lock; a file of another name is left alone.
func TestOpenRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	r.Close()
	leftovers := []string{
		filepath.Join(dir, stateDir, ".tmp-0123456789abcdef"),
		filepath.Join(dir, ".tmp-fedcba9876543210"),
	}
	other := filepath.Join(dir, stateDir, ".tmp-not-ours")
	live, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := live.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(leftovers, other) {
		if err := os.WriteFile(p, []byte("half a ref"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range leftovers {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed while a live writer held the lock: %v", p, err)
		}
	}
	wl.Unlock()
	live.Close()
	// Closed only now: a Close while the writer held the lock would give up
	// its wait after a second, and the wait, left behind, would take the lock
	// for a moment whenever the writer let go, racing the open below.
	o.Close()

	o, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, p := range leftovers {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after open: %v", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s, not a name gitlog gives, was removed: %v", other, err)
	}
}
