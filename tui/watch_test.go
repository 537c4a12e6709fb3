package tui

import (
	"context"
	"go/token"
	"reflect"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// A commit made through another handle on the vault (as by another process)
// shows as soon as it is made: the poll is an hour here, so only the watch of
// the vault can bring it. The deadline bounds only a failing run.
func TestWatchShowsCommitsAtOnce(t *testing.T) {
	v, opts := newVault(t)
	seed(t, v)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(ctx, v, Options{Now: func() time.Time { return uiNow }, PollInterval: time.Hour, NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})

	// Commands run in their own goroutines, as in the program; Update runs here.
	msgs := make(chan tea.Msg, 64)
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			switch msg := c().(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					run(c)
				}
			default:
				if t := reflect.TypeOf(msg); t.PkgPath() == "charm.land/bubbletea/v2" && !token.IsExported(t.Name()) {
					return
				}
				select {
				case msgs <- msg:
				case <-ctx.Done():
				}
			}
		}()
	}
	step := func(until func() bool, what string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !until() {
			select {
			case msg := <-msgs:
				_, c := m.Update(msg)
				run(c)
			case <-deadline:
				t.Fatalf("no %s within 20s", what)
			}
		}
	}
	run(m.Init())
	step(func() bool { return m.watched && m.snap != nil }, "first head and watch")

	other, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	write(t, other, vault.Meta{Command: "create", Agent: "elsewhere"}, "/memories/elsewhere.md", "x\n")
	head, err := other.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	step(func() bool { return m.snap.Commit() == head.Commit() }, "new head after a commit elsewhere")
	step(func() bool { return len(m.hist.recs) > 0 && m.hist.recs[0].Path == "/memories/elsewhere.md" }, "new commit in the history")
}
