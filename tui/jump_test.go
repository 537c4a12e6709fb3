package tui

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/vault"
)

// G as soon as the interface opens once read every record of the history, and
// checked each against its tree, to find its end: 48 s on 100,000 commits. It
// reads the history's shape and the records of the oldest page alone, and
// shows the same window and position a whole walk gives.
func TestJumpToFirstReadsOnlyTheEnd(t *testing.T) {
	v, _ := newVault(t)
	for i := range 12 {
		write(t, v, vault.Meta{Command: "create", Agent: "claude"}, fmt.Sprintf("/memories/f%02d.md", i), "x\n")
	}
	counting := &countLog{Vault: v}
	d := newDriverOpts(t, counting, v, 40, 10, Options{PageSize: 4})
	d.keys("tab", "G")
	r := d.m.hist.selected()
	if pos, _ := at(d); r == nil || r.Command != "init" || pos != "13/13" {
		t.Errorf("after G the history selects %+v at %s; want the first commit, 13/13", r, pos)
	}
	if counting.whole != 0 {
		t.Errorf("G read every record of the history %d times", counting.whole)
	}
	all := history(t, v)
	if got, want := d.m.hist.recs[0].Commit, all[len(all)-4].Commit; got != want {
		t.Errorf("the window starts at %s, want %s, the fourth oldest", short(got), short(want))
	}
	d.keys("k", "k", "k", "k")
	if pos, _ := at(d); pos != "9/13" || d.m.hist.selected().Commit != all[8].Commit {
		t.Errorf("four up from the first commit the history is at %s, %s; want 9/13, %s", pos, short(d.m.hist.selected().Commit), short(all[8].Commit))
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
