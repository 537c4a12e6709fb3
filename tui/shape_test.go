package tui

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/vault"
)

// G on a long history once walked every commit at each press. With the shape
// a background walk left, G reads only the commits made since; the window and
// the position it shows are those a whole walk gives, with new commits on top
// and, after a sync merge, by walking again.
func TestJumpWithShape(t *testing.T) {
	v, _ := newVault(t)
	for i := range 12 {
		write(t, v, vault.Meta{Command: "create", Agent: "claude"}, fmt.Sprintf("/memories/f%02d.md", i), "x\n")
	}
	d := newDriverOpts(t, v, v, 40, 10, Options{PageSize: 4})
	d.keys("tab")
	if d.m.hist.done || !d.m.hist.wantsShape() {
		t.Fatalf("a history of 13 commits in pages of 4: done %v, wants a shape %v", d.m.hist.done, d.m.hist.wantsShape())
	}
	d.send(shapeDueMsg{})
	if s := d.m.hist.shape; s == nil || s.total != 13 || len(s.oldest) != 4 {
		t.Fatalf("the background walk's shape is %+v, want 13 commits and the oldest 4", s)
	}
	write(t, v, vault.Meta{Command: "create", Agent: "claude"}, "/memories/late.md", "x\n")
	d.send(pollMsg{})

	counting := &countLog{Vault: v}
	d.m.v = counting // every read from here on is counted
	d.keys("G")
	r := d.m.hist.selected()
	if pos, _ := at(d); r == nil || r.Command != "init" || pos != "14/14" {
		t.Errorf("after G the history selects %+v at %s; want the first commit, 14/14", r, pos)
	}
	if counting.whole != 0 {
		t.Errorf("G with a shape walked the whole history %d times", counting.whole)
	}
	all := history(t, v)
	if got, want := d.m.hist.recs[0].Commit, all[len(all)-4].Commit; got != want {
		t.Errorf("the window starts at %s, want %s, the fourth oldest", short(got), short(want))
	}

	// A shape whose head is not a straight line below the newest commits is
	// not trusted: G walks again.
	d.keys("g")
	d.m.hist.shape.head = "0000000000000000000000000000000000000000"
	d.keys("G")
	if pos, _ := at(d); counting.whole != 1 || pos != "14/14" {
		t.Errorf("G with a stale shape: %d whole walks, at %s; want one walk and 14/14", counting.whole, pos)
	}
}

// at is the history cursor's position as the status bar shows it.
func at(d *driver) (string, int) {
	pos, n := d.m.hist.position()
	return fmt.Sprintf("%d/%s", pos, n), pos
}

// countLog counts the reads of the whole history.
type countLog struct {
	*vault.Vault
	whole int
}

func (c *countLog) Log(ctx context.Context, opts vault.LogOptions) ([]vault.Record, error) {
	if opts.Limit == 0 && opts.Path == "" && opts.Skip == 0 {
		c.whole++
	}
	return c.Vault.Log(ctx, opts)
}
