package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// Held pgdn keys once moved the history's cursor only to the end of what was
// loaded, again and again while the next page came: 50 of them moved 172 rows,
// not 600. Keys pressed faster than pages come move the cursor as far as they
// ask once the pages are there.
func TestHeldPageDownGoesAllTheWay(t *testing.T) {
	v, _ := newVault(t)
	for i := range 80 {
		write(t, v, vault.Meta{Command: "create"}, fmt.Sprintf("/memories/f%02d.md", i), "x\n")
	}
	a := newAsyncDriverOpts(t, v, v, 80, 24, Options{PageSize: 4})
	a.press("tab")
	page := a.m.hist.height
	for range 5 {
		a.press("pgdown") // all at once, before any page comes
	}
	a.settle()
	if want := 5 * page; a.m.hist.cursor != want {
		t.Errorf("5 pgdn of %d rows moved the cursor to row %d, want %d", page, a.m.hist.cursor, want)
	}
	if r := a.m.hist.selected(); r == nil || a.m.content.want.rev != r.Commit {
		t.Errorf("the content shows %+v, not the selected commit", a.m.content.want)
	}
}

// inFlight counts the reads of commits that run at once.
type inFlight struct {
	*vault.Vault
	mu       sync.Mutex
	now, max int
	calls    int
}

func (f *inFlight) Show(ctx context.Context, rev string) (*vault.Change, error) {
	f.mu.Lock()
	f.now++
	f.calls++
	f.max = max(f.max, f.now)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	}()
	time.Sleep(5 * time.Millisecond) // a diff takes a moment
	return f.Vault.Show(ctx, rev)
}

// 100 held j keys once started 100 decrypted diffs at once, which on a loaded
// machine kept the processors from the keys: they took 5.6 s to drain and the
// cursor moved on after the key was released. One read of the content runs
// at a time, for the newest selection; the cursor follows every key.
func TestHeldKeysNeverPileUpReads(t *testing.T) {
	v, _ := newVault(t)
	for i := range 110 {
		write(t, v, vault.Meta{Command: "create"}, fmt.Sprintf("/memories/f%03d.md", i), "x\n")
	}
	all := history(t, v)
	f := &inFlight{Vault: v}
	a := newAsyncDriver(t, f, v, 100, 30)
	a.press("tab")
	a.settle()
	for range 100 {
		a.update(keyMsg("j"))
	}
	if r := a.m.hist.selected(); r == nil || r.Commit != all[100].Commit {
		t.Fatalf("after 100 j the cursor is not on the 101st commit")
	}
	a.until(func() bool { return a.m.content.want.rev == all[100].Commit && a.m.content.kind == bodyDiff }, "the 101st commit's diff")
	a.settle()
	if f.max > 1 || f.calls > 10 {
		t.Errorf("100 held keys ran %d reads of commits, %d at once; want a few, one at a time", f.calls, f.max)
	}
}

// gatedPages is a vault whose pages after the first wait until released, as
// pages deep in a long history take a while.
type gatedPages struct {
	*vault.Vault
	release chan struct{}
}

func (g *gatedPages) Log(ctx context.Context, opts vault.LogOptions) ([]vault.Record, error) {
	if opts.Skip > 0 {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Vault.Log(ctx, opts)
}

// A filter that few commits pass once showed a bare "loading…" for as long as
// it read the history (25 s seen). It says how far it has read and how many
// commits passed, and esc clears it.
func TestFilterSaysHowFarItRead(t *testing.T) {
	v, _ := newVault(t)
	for i := range 30 {
		write(t, v, vault.Meta{Command: "create", Agent: "claude"}, fmt.Sprintf("/memories/f%02d.md", i), "x\n")
	}
	g := &gatedPages{Vault: v, release: make(chan struct{})}
	a := newAsyncDriverOpts(t, g, v, 100, 30, Options{PageSize: 10})
	a.press("tab", "/")
	a.typeText("agent:importer-bot")
	a.until(func() bool { return strings.Contains(a.frame(), "commits read") }, "word of how far the filter read")
	if f := a.frame(); !strings.Contains(f, "10 commits read, 0 match · esc clears it") {
		t.Errorf("the history says:\n%s", f)
	}
	a.press("esc")
	close(g.release)
	a.settle()
	if a.m.hist.filter != "" || len(a.m.hist.view) == 0 {
		t.Errorf("esc left the filter %q with %d commits", a.m.hist.filter, len(a.m.hist.view))
	}
}
