package tui

import (
	"context"
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
