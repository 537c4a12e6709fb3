package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog"
)

// TestAheadBehindSameSecond: status counts commits as git's rev-list --count
// does, whatever their dates say. Commits made within one second (an agent's
// burst of writes) share a date, and a count that walked by date stopped
// early: with main two commits past origin/main it said "1 ahead, 2 behind"
// in about a third of runs.
func TestAheadBehindSameSecond(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 27, 15, 42, 36, 0, time.UTC)
	v, _, err := Init(ctx, filepath.Join(dir, "v.git"), Options{IdentityFile: filepath.Join(dir, "id"), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var line []gitlog.Hash
	for i := range 8 {
		h, err := gitlog.ParseHash(mustCreate(t, v, fmt.Sprintf("/memories/f%d.md", i), "one\n"))
		if err != nil {
			t.Fatal(err)
		}
		line = append(line, h)
	}
	head := line[len(line)-1]
	count := func(a, b gitlog.Hash) string {
		t.Helper()
		onlyA, onlyB, err := v.aheadBehind(ctx, a, b)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d/%d", onlyA, onlyB)
	}
	for k, c := range line {
		if got, want := count(head, c), fmt.Sprintf("%d/0", len(line)-1-k); got != want {
			t.Errorf("aheadBehind(head, commit %d of 8) = %s, want %s", k+1, got, want)
		}
		if got, want := count(c, head), fmt.Sprintf("0/%d", len(line)-1-k); got != want {
			t.Errorf("aheadBehind(commit %d of 8, head) = %s, want %s", k+1, got, want)
		}
	}

	// A side line of two commits from the fourth, in the same second, then
	// a merge of both lines.
	w, err := v.repo.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = w.UpdateRef(gitlog.Branch, head, line[3])
	w.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, v, "/memories/side1.md", "two\n")
	side, err := gitlog.ParseHash(mustCreate(t, v, "/memories/side2.md", "two\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := count(head, side); got != "4/2" {
		t.Errorf("aheadBehind(main, a side line of 2 from its 4th commit) = %s, want 4/2", got)
	}
	if got := count(side, head); got != "2/4" {
		t.Errorf("aheadBehind(a side line of 2 from main's 4th commit, main) = %s, want 2/4", got)
	}
	w, err = v.repo.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := v.repo.RootTree(head)
	if err != nil {
		t.Fatal(err)
	}
	merge, err := w.Commit(t.Context(), side, nil, gitlog.CommitInfo{Parents: []gitlog.Hash{side, head}, Tree: tree, Message: "merge\n", Author: gitlog.Signature{Name: "t", Email: "t@t", When: now}, Committer: gitlog.Signature{Name: "t", Email: "t@t", When: now}})
	w.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := count(merge, head); got != "3/0" {
		t.Errorf("aheadBehind(a merge of the side line into main, main) = %s, want 3/0", got)
	}
	if got := count(head, merge); got != "0/3" {
		t.Errorf("aheadBehind(main, a merge of the side line into it) = %s, want 0/3", got)
	}
}
