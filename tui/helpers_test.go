package tui

import (
	"context"
	"flag"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/memvault/memvault/vault"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// epoch is when the test vaults' first commit is made; commits follow every
// seven minutes, and the interface's clock reads uiNow.
var (
	epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	uiNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// clock hands out commit times a fixed step apart.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(7 * time.Minute)
	return t
}

// newVault makes an empty vault in the default format (sealed) whose commits
// have fixed times, and returns it with the options that open it again.
func newVault(tb testing.TB) (*vault.Vault, vault.Options) {
	tb.Helper()
	return newVaultFormat(tb, true)
}

// newVaultFormat is newVault, in the sealed format when sealed is true, else
// the plain one: the UI must draw a sealed vault's frames as it draws a plain
// one's.
func newVaultFormat(tb testing.TB, sealed bool) (*vault.Vault, vault.Options) {
	tb.Helper()
	dir := tb.TempDir()
	c := &clock{t: epoch}
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Now: c.now, Plain: !sealed}
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		tb.Fatalf("vault.Init: %v", err)
	}
	tb.Cleanup(func() { v.Close() })
	return v, opts
}

// write makes one commit, as the memory tool would: content at p, or with
// content nil the removal of p.
func write(tb testing.TB, v *vault.Vault, meta vault.Meta, p, content string) {
	tb.Helper()
	err := v.Update(context.Background(), meta, func(tx *vault.Tx) error {
		if content == "" {
			return tx.Remove(p)
		}
		return tx.WriteFile(context.Background(), p, []byte(content))
	})
	if err != nil {
		tb.Fatalf("Update(%s %s): %v", meta.Command, p, err)
	}
}

// seed fills v with a small, fixed history.
func seed(tb testing.TB, v *vault.Vault) {
	tb.Helper()
	m := func(cmd, id string) vault.Meta {
		return vault.Meta{Command: cmd, ToolUseID: id, Agent: "claude", Session: "s-1"}
	}
	write(tb, v, m("create", "toolu_01Abc"), "/memories/user/preferences.md",
		"# Preferences\n\n- Answers in British English\n- Short commit messages\n")
	write(tb, v, m("create", "toolu_02Def"), "/memories/projects/memvault/notes.md",
		"# memvault\n\nThe vault is a bare git repository.\nEvery command is one commit.\n")
	write(tb, v, m("str_replace", "toolu_03Ghi"), "/memories/user/preferences.md",
		"# Preferences\n\n- Answers in British English\n- Short commit messages\n- Tabs, not spaces\n")
	write(tb, v, m("create", "toolu_04Jkl"), "/memories/projects/memvault/todo.md",
		"- [ ] terminal UI\n- [x] history\n")
	write(tb, v, m("create", "toolu_05Mno"), "/memories/scratch.md", "temporary\n")
	write(tb, v, m("delete", "toolu_06Pqr"), "/memories/scratch.md", "")
}

// driver runs the root model as the program would, but in the test's goroutine:
// every command runs at once and its message goes straight back to Update.
type driver struct {
	tb   testing.TB
	m    *Model
	v    *vault.Vault
	quit bool
}

func newDriver(tb testing.TB, v *vault.Vault, w, h int) *driver {
	tb.Helper()
	return newDriverFor(tb, v, v, w, h)
}

// newDriverFor runs the interface on ui, a view of v, whose history names the
// commits in frames.
func newDriverFor(tb testing.TB, ui Vault, v *vault.Vault, w, h int) *driver {
	tb.Helper()
	return newDriverOpts(tb, ui, v, w, h, Options{})
}

// newDriverOpts is newDriverFor with options; the clock, the polling and the
// colour are the tests' own.
func newDriverOpts(tb testing.TB, ui Vault, v *vault.Vault, w, h int, opts Options) *driver {
	tb.Helper()
	opts.Now = func() time.Time { return uiNow }
	opts.PollInterval = -1
	opts.NoColor = true
	m := New(context.Background(), ui, opts)
	d := &driver{tb: tb, m: m, v: v}
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(m.Init())
	return d
}

func (d *driver) send(msgs ...tea.Msg) {
	for _, msg := range msgs {
		d.run(func() tea.Msg { return msg })
	}
}

// run runs cmd and everything that follows from it.
func (d *driver) run(cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 && !d.quit {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			d.quit = true
		default:
			if t := reflect.TypeOf(msg); t.PkgPath() == "charm.land/bubbletea/v2" && !token.IsExported(t.Name()) {
				continue // a request to the terminal, such as for its background
			}
			_, next := d.m.Update(msg)
			queue = append(queue, next)
		}
	}
}

// keys presses each key: a name such as "enter", "tab", "down", or text typed
// one character at a time.
func (d *driver) keys(keys ...string) {
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]rune{
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "esc": tea.KeyEscape, "up": tea.KeyUp,
		"down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight, "pgdown": tea.KeyPgDown,
		"pgup": tea.KeyPgUp, "space": tea.KeySpace, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace,
	}
	if k == "shift+tab" {
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	if c, ok := special[k]; ok {
		msg := tea.KeyPressMsg{Code: c}
		if k == "space" {
			msg.Text = " "
		}
		return msg
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// frame is the current screen as plain text, every commit hash replaced by a
// stand-in numbered from the oldest commit, since ciphertext (and so every
// hash) differs from run to run.
func (d *driver) frame() string {
	d.tb.Helper()
	s := ansi.Strip(d.m.View().Content)
	recs, err := d.v.Log(context.Background(), vault.LogOptions{})
	if err != nil {
		d.tb.Fatalf("Log: %v", err)
	}
	for i, r := range recs {
		name := fmt.Sprintf("c%06d", len(recs)-i)
		s = strings.ReplaceAll(s, r.Commit, name+strings.Repeat("·", len(r.Commit)-len(name)))
		s = strings.ReplaceAll(s, r.Commit[:12], name+"·····")
		s = strings.ReplaceAll(s, short(r.Commit), name)
	}
	// The review line's changes too, as p00001 on, oldest first; and the
	// rejected ones, as r00001 on.
	for _, rejected := range []bool{false, true} {
		ps, err := d.v.Review(context.Background(), vault.ReviewOptions{Rejected: rejected})
		if err != nil {
			d.tb.Fatalf("Review: %v", err)
		}
		for i, p := range ps {
			name := fmt.Sprintf("p%05d", i+1)
			if rejected {
				name = fmt.Sprintf("r%05d", len(ps)-i)
			}
			s = strings.ReplaceAll(s, p.Commit, name+strings.Repeat("·", len(p.Commit)-len(name)))
			s = strings.ReplaceAll(s, p.Commit[:12], name+"······")
			s = strings.ReplaceAll(s, short(p.Commit), name)
		}
	}
	return s
}

// golden compares the frame with testdata/name.golden, or rewrites it with -update.
func (d *driver) golden(name string) {
	d.tb.Helper()
	got := d.frame() + "\n"
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			d.tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			d.tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		d.tb.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		d.tb.Errorf("frame %s differs from %s; got:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// bothFormats runs test on a plain vault, then on a sealed one (as the
// subtest "sealed"), against the same golden frames.
func bothFormats(t *testing.T, test func(t *testing.T, sealed bool)) {
	t.Run("plain", func(t *testing.T) { test(t, false) })
	t.Run("sealed", func(t *testing.T) { test(t, true) })
}
