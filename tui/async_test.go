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

// asyncDriver runs the root model as the program does: Update in the test's
// goroutine, each command in a goroutine of its own, its message queued. A
// test sees the frames while a command still runs (a write waiting for the
// lock), which the driver, running every command to its end at once, cannot.
type asyncDriver struct {
	*driver
	ctx  context.Context
	msgs chan tea.Msg
}

func newAsyncDriver(t testing.TB, ui Vault, v *vault.Vault, w, h int) *asyncDriver {
	t.Helper()
	return newAsyncDriverOpts(t, ui, v, w, h, Options{})
}

// newAsyncDriverOpts is newAsyncDriver with options; the clock, the polling
// and the colour are the tests' own.
func newAsyncDriverOpts(t testing.TB, ui Vault, v *vault.Vault, w, h int, opts Options) *asyncDriver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.Now, opts.PollInterval, opts.NoColor = func() time.Time { return uiNow }, -1, true
	m := New(ctx, ui, opts)
	a := &asyncDriver{driver: &driver{tb: t, m: m, v: v}, ctx: ctx, msgs: make(chan tea.Msg, 256)}
	a.update(tea.WindowSizeMsg{Width: w, Height: h})
	a.run(m.Init())
	a.until(func() bool { return m.snap != nil && m.tree.root.listed && len(m.hist.recs) > 0 }, "the first frame")
	return a
}

// run runs cmd in a goroutine; its message comes back through a.msgs.
func (a *asyncDriver) run(c tea.Cmd) {
	if c == nil {
		return
	}
	go func() {
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				a.run(c)
			}
		default:
			if t := reflect.TypeOf(msg); t.PkgPath() == "charm.land/bubbletea/v2" && !token.IsExported(t.Name()) {
				return
			}
			select {
			case a.msgs <- msg:
			case <-a.ctx.Done():
			}
		}
	}()
}

func (a *asyncDriver) update(msg tea.Msg) {
	_, c := a.m.Update(msg)
	a.run(c)
}

// press presses each key, then takes what the commands bring until cond
// holds.
func (a *asyncDriver) press(keys ...string) {
	for _, k := range keys {
		a.update(keyMsg(k))
	}
}

// until takes the commands' messages until cond holds.
func (a *asyncDriver) until(cond func() bool, what string) {
	a.tb.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case msg := <-a.msgs:
			a.update(msg)
		case <-deadline:
			a.tb.Fatalf("no %s within 20s; the screen:\n%s", what, a.frame())
		}
	}
}

// settle takes the commands' messages until none comes for 200 ms.
func (a *asyncDriver) settle() {
	for {
		select {
		case msg := <-a.msgs:
			a.update(msg)
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}
