package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// history returns every record of v, newest first.
func history(t *testing.T, v *vault.Vault) []vault.Record {
	t.Helper()
	recs, err := v.Log(context.Background(), vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// G in the history once went down one page of loaded commits at a time
// (reaching the first of 15,005 commits took 75 presses); it goes to the first
// commit at once, loading only the oldest page, and moving up from there loads
// the pages above it.
func TestBottomReachesFirstCommit(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	for i := range 5 {
		write(t, v, vault.Meta{Command: "create", Agent: "claude"}, "/memories/more/f"+string(rune('a'+i))+".md", "x\n")
	}
	all := history(t, v) // 12 commits
	d := newDriverOpts(t, v, v, 80, 24, Options{PageSize: 3})
	d.keys("tab", "G")
	if r := d.m.hist.selected(); r == nil || r.Commit != all[len(all)-1].Commit {
		t.Fatalf("after one G the history selects %+v, want the first commit %s", r, short(all[len(all)-1].Commit))
	}
	if got := d.m.statusBar(); !strings.Contains(got, "commit 12/12") {
		t.Errorf("after G the status bar says %q, want commit 12/12", strings.TrimSpace(got))
	}
	for i := len(all) - 2; i >= 0; i-- {
		d.keys("k")
		if r := d.m.hist.selected(); r == nil || r.Commit != all[i].Commit {
			t.Fatalf("moving up from the first commit, step %d selects %+v, want %s", len(all)-1-i, r, short(all[i].Commit))
		}
	}
	if got := d.m.statusBar(); !strings.Contains(got, "commit 1/12") {
		t.Errorf("back at the newest commit the status bar says %q, want commit 1/12", strings.TrimSpace(got))
	}
	d.keys("G", "g")
	if r := d.m.hist.selected(); r == nil || r.Commit != all[0].Commit {
		t.Errorf("G then g selects %+v, want the newest commit", r)
	}
}

// A commit can be reached by its hash or a checkpoint's name, however far down
// the history it is.
func TestJumpToCommit(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	all := history(t, v)
	if _, err := v.Checkpoint(context.Background(), "before-todo", all[4].Commit, ""); err != nil {
		t.Fatal(err)
	}
	d := newDriverOpts(t, v, v, 80, 24, Options{PageSize: 2})
	for _, tc := range []struct{ rev, want string }{
		{all[5].Commit[:8], all[5].Commit},
		{"before-todo", all[4].Commit},
		{all[1].Commit[:6], all[1].Commit},
	} {
		d.keys(":")
		d.typeText(tc.rev)
		d.keys("enter")
		if r := d.m.hist.selected(); r == nil || r.Commit != tc.want {
			t.Errorf("go to %q selects %+v, want %s", tc.rev, r, short(tc.want))
		}
		if d.m.focus != paneHistory || d.m.content.want.rev != tc.want {
			t.Errorf("go to %q: focus %v, content %+v; want the history and the commit's diff", tc.rev, d.m.focus, d.m.content.want)
		}
	}
	d.keys(":")
	d.typeText("nosuchthing")
	d.keys("enter")
	if !d.m.isErr || !strings.Contains(d.m.status, "nosuchthing") {
		t.Errorf("go to an unknown revision: status %q, want an error naming it", d.m.status)
	}
}

// slowWalk is a vault whose walks of the whole history wait until released,
// as a walk of 100,000 commits would take seconds.
type slowWalk struct {
	*vault.Vault
	release chan struct{} // for the whole history's records
	oldest  chan struct{} // for the walk of its shape (G)
}

func (s *slowWalk) Log(ctx context.Context, opts vault.LogOptions) ([]vault.Record, error) {
	if opts.Limit == 0 {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Vault.Log(ctx, opts)
}

func (s *slowWalk) LogOldest(ctx context.Context, n int) ([]vault.Record, int, error) {
	select {
	case <-s.oldest:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	return s.Vault.LogOldest(ctx, n)
}

// : once walked the whole history before it showed anything, 10 to 29 s on a
// long one, and "6e9" said only 'unknown revision'. The vault's lookup of
// revisions finds the commit, which shows at once: selected when it is
// loaded, else shown while a walk places it in the history, which esc stops.
// A prefix too short says how many digits it needs.
func TestJumpShowsTheCommitAtOnce(t *testing.T) {
	v, _ := newVault(t)
	for i := range 60 {
		write(t, v, vault.Meta{Command: "create", Agent: "claude"}, fmt.Sprintf("/memories/f%02d.md", i), fmt.Sprintf("file %d\n", i))
	}
	all := history(t, v)
	slow := &slowWalk{Vault: v, release: make(chan struct{}), oldest: make(chan struct{})}
	a := newAsyncDriverOpts(t, slow, v, 100, 30, Options{PageSize: 4})

	a.press("tab", ":")
	a.typeText(all[1].Commit[:10])
	a.press("enter")
	a.until(func() bool { r := a.m.hist.selected(); return r != nil && r.Commit == all[1].Commit }, "the loaded commit selected")

	deep := all[50] // not loaded: pages of 4, as many as the pane needs
	a.press(":")
	a.typeText(deep.Commit[:8])
	a.press("enter")
	a.until(func() bool { return a.m.content.want.rev == deep.Commit && a.m.content.kind == bodyDiff }, "the deep commit shown")
	if !strings.Contains(a.frame(), "+file 9") || !strings.Contains(a.m.status, "esc stops") {
		t.Errorf("the deep commit's diff is not shown, or the status does not say the walk goes on (%q):\n%s", a.m.status, a.frame())
	}
	a.press("esc")
	if a.m.hist.jumping != "" || a.m.content.want.rev != deep.Commit {
		t.Errorf("esc: the walk goes on (%q), or the commit is gone: %+v", a.m.hist.jumping, a.m.content.want)
	}

	a.press(":")
	a.typeText(deep.Commit[:8])
	a.press("enter")
	a.until(func() bool { return a.m.hist.jumping != "" }, "the walk")
	close(slow.release)
	a.until(func() bool { r := a.m.hist.selected(); return r != nil && r.Commit == deep.Commit }, "the deep commit selected")

	a.press("g")
	a.settle()
	a.press("G") // a walk of the history's shape: esc stops it too
	if !strings.Contains(a.m.status, "esc stops") {
		t.Errorf("G says %q", a.m.status)
	}
	a.press("esc")
	if a.m.hist.jumping != "" || !strings.Contains(a.m.status, "stopped") {
		t.Errorf("esc after G: the walk goes on (%q), the status says %q", a.m.hist.jumping, a.m.status)
	}
	close(slow.oldest)

	a.press(":")
	a.typeText(all[3].Commit[:3])
	a.press("enter")
	a.until(func() bool { return a.m.isErr }, "an error")
	if !strings.Contains(a.m.status, "needs at least 4 hex digits") {
		t.Errorf("a 3-digit prefix says %q", a.m.status)
	}
}
