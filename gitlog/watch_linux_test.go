package gitlog

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// waitMoved fails t unless ch gives a value; the long deadline only bounds a
// failing run.
func waitMoved(t *testing.T, ch <-chan struct{}, after string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("Watch: channel closed, want a value after %s", after)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Watch: nothing after %s", after)
	}
}

func drainMoved(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// Watch sees the branch move however it moves: memvault's own commit, git
// rewriting the loose ref, and git packing refs.
func TestWatchSeesRefMoves(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git:", err)
	}
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("2")})
	waitMoved(t, ch, "a commit")
	git := func(args ...string) {
		t.Helper()
		flush(t, r)
		drainMoved(ch)
		out, err := exec.Command("git", append([]string{"-C", r.Dir()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		waitMoved(t, ch, "git "+strings.Join(args, " "))
	}
	git("update-ref", "refs/heads/main", first.String())
	git("pack-refs", "--all")
	git("update-ref", "refs/heads/main", second.String()) // from packed-refs to a loose ref
	cancel()
	for range ch {
	}
}

// A watch ends, closing its channel, when the repository is removed.
func TestWatchEndsWithTheRepository(t *testing.T) {
	dir := t.TempDir() + "/r.git"
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := r.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("Watch: channel still open 30s after the repository was removed")
		}
	}
}
