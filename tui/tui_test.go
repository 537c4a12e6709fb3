package tui

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// fixedIdentity shows the identity under a fixed name, so frames that mention
// it do not depend on the test's temporary directory.
type fixedIdentity struct{ *vault.Vault }

func (fixedIdentity) IdentityFile() string { return "~/.config/memvault/identity" }

// fixedDir shows the vault's directory under a fixed name, so frames that
// mention it do not depend on the test's temporary directory.
type fixedDir struct{ *vault.Vault }

func (fixedDir) Dir() string { return "~/.local/share/memvault/default.git" }

// TestFrames drives the root model with keys and sizes, as a person would, and
// compares each frame with its golden file.
func TestFrames(t *testing.T) {
	tests := []struct {
		name  string
		empty bool
		steps func(t *testing.T, d *driver)
	}{
		{"first", false, func(t *testing.T, d *driver) {
			d.golden("first")
		}},
		{"tree", false, func(t *testing.T, d *driver) {
			d.keys("j", "l", "j")
			d.golden("tree_unfold")
			d.keys("j", "l", "j")
			d.golden("tree_file")
			d.keys("h", "h")
			d.golden("tree_fold")
		}},
		{"history", false, func(t *testing.T, d *driver) {
			d.keys("tab")
			d.golden("history_focus")
			d.keys("j", "j", "j")
			d.golden("history_commit")
		}},
		{"marks", false, func(t *testing.T, d *driver) {
			d.keys("tab", "j", "j", "j", "space", "j", "j", "space", "v")
			d.golden("diff_marked")
			d.keys("esc")
			if len(d.m.hist.marks) != 0 || d.m.content.want.show != showCommit {
				t.Errorf("esc left marks %v and content %v, want none and the commit", d.m.hist.marks, d.m.content.want)
			}
		}},
		{"as_of", false, func(t *testing.T, d *driver) {
			d.keys("G", "l", "j", "tab", "j", "j", "j", "j", "j", "v")
			d.golden("as_of")
			d.keys("v")
			if d.m.content.want.show != showCommit {
				t.Errorf("a second v shows %v, want the commit's diff", d.m.content.want)
			}
		}},
		{"file_history", false, func(t *testing.T, d *driver) {
			d.keys("G", "l", "j", "f")
			d.golden("history_file")
		}},
		{"filter", false, func(t *testing.T, d *driver) {
			d.keys("/")
			d.typeText("pref")
			d.golden("filter_typing")
			d.keys("enter", "j", "j")
			d.golden("filter_applied")
			d.keys("esc")
			d.golden("filter_cleared")
		}},
		{"resize", false, func(t *testing.T, d *driver) {
			d.keys("j", "l", "j", "l", "j")
			d.send(tea.WindowSizeMsg{Width: 200, Height: 60})
			d.golden("resize_200x60")
			d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
			d.golden("resize_80x24")
		}},
		{"help", false, func(t *testing.T, d *driver) {
			// Wide enough that the box leaves the commit hashes whole, for the stand-ins.
			d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
			d.keys("?")
			d.golden("help")
			d.keys("esc")
			if d.m.mode != modeBrowse {
				t.Errorf("after ? and esc, mode = %v, want browse", d.m.mode)
			}
		}},
		// The common widths show each commit's agent and times, and the key
		// list stays above the history.
		{"widths", false, func(t *testing.T, d *driver) {
			d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
			d.keys("tab")
			d.golden("width_100")
			d.keys("?")
			d.golden("width_100_help")
			d.keys("esc")
			d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
			d.golden("width_120")
			d.send(tea.WindowSizeMsg{Width: 140, Height: 40})
			d.golden("width_140")
		}},
		{"empty", true, func(t *testing.T, d *driver) {
			d.golden("empty")
		}},
	}
	// A sealed vault draws the same frames: names, messages and sizes opened.
	for _, sealed := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if sealed {
				name = "sealed/" + name
			}
			t.Run(name, func(t *testing.T) {
				v, _ := newVaultFormat(t, sealed)
				if !tt.empty {
					seed(t, v)
				}
				d := newDriverFor(t, fixedDir{v}, v, 80, 24)
				tt.steps(t, d)
			})
		}
	}
}

// TestNoIdentity shows a clear error, not a crash, when the identity is gone:
// the tree, the sizes and the history still work.
func TestNoIdentity(t *testing.T) {
	// Plain: a sealed vault's tree opens only under its key, which needs the
	// identity (TestEndToEndNoIdentity shows what the UI says then).
	v, opts := newVaultFormat(t, false)
	seed(t, v)
	if err := os.Remove(opts.IdentityFile); err != nil {
		t.Fatal(err)
	}
	// Another process, as the user's would be: the one that wrote the files
	// keeps their plaintext and needs no identity to show them.
	dir := v.Dir()
	v.Close()
	v, err := vault.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	d := newDriverFor(t, fixedIdentity{v}, v, 80, 24)
	d.keys("G", "l", "j")
	d.golden("no_identity")
	if !strings.Contains(d.frame(), "preferences.md      87B") {
		t.Errorf("without an identity the tree lost its sizes:\n%s", d.frame())
	}
}

// TestLive shows a commit made by someone else while the interface is open,
// without moving the user's selection.
func TestLive(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	d.keys("tab", "j", "j")
	before := d.m.hist.selected().Commit
	write(t, v, vault.Meta{Command: "create", ToolUseID: "toolu_07Stu", Agent: "claude"},
		"/memories/user/new.md", "fresh\n")
	d.send(pollMsg{})
	d.golden("live")
	if got := d.m.hist.selected().Commit; got != before {
		t.Errorf("after a new commit the history cursor is on %s, want it still on %s", got, before)
	}
	if got := d.m.hist.recs[0].Path; got != "/memories/user/new.md" {
		t.Errorf("newest record is for %s, want /memories/user/new.md", got)
	}
}

// TestMouse clicks a tree row and scrolls the history with the wheel.
func TestMouse(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	d.send(tea.MouseClickMsg{X: 4, Y: 3, Button: tea.MouseLeft}) // the row "user/"
	if n := d.m.tree.selected(); n == nil || n.path != "/memories/user" {
		t.Fatalf("click on the third tree row selected %v, want /memories/user", n)
	}
	d.send(tea.MouseClickMsg{X: 4, Y: 3, Button: tea.MouseLeft})
	if n := d.m.tree.selected(); !n.open {
		t.Errorf("second click on a folded directory did not unfold it")
	}
	d.send(tea.MouseWheelMsg{X: 10, Y: d.m.lay.hist.y + 2, Button: tea.MouseWheelDown})
	if d.m.hist.cursor != 3 {
		t.Errorf("wheel down over the history moved its cursor to %d, want 3", d.m.hist.cursor)
	}
}

// TestControlCharacters keeps escape sequences written by an agent off the
// terminal.
func TestControlCharacters(t *testing.T) {
	v, _ := newVault(t)
	write(t, v, vault.Meta{Command: "create"}, "/memories/evil.md", "a\x1b]0;pwned\x07b\tc\u202ed\n")
	d := newDriver(t, v, 80, 24)
	d.keys("j")
	view := d.m.View().Content
	for _, bad := range []string{"\x1b]0;", "\x07", "\u202e", "\t"} {
		if strings.Contains(view, bad) {
			t.Errorf("the frame holds %q from a memory file", bad)
		}
	}
	if !strings.Contains(d.frame(), `a\x1b]0;pwned\ab    c\u202ed`) {
		t.Errorf("the file's text is not shown with its control characters escaped:\n%s", d.frame())
	}
}

// readMemory returns the content of memory file p at the head, or "" if none.
func readMemory(t *testing.T, v *vault.Vault, p string) string {
	t.Helper()
	snap, err := v.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := snap.ReadFile(context.Background(), p)
	if errors.Is(err, vault.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", p, err)
	}
	return string(b)
}

// TestUndo restores a file, reverts a commit and rolls the vault back, each
// after a confirmation that says what will change, and each a new commit that
// the history shows at once, selected.
func TestUndo(t *testing.T) { bothFormats(t, testUndo) }

func testUndo(t *testing.T, sealed bool) {
	const prefs = "/memories/user/preferences.md"
	t.Run("restore", func(t *testing.T) {
		v, _ := newVaultFormat(t, sealed)
		seed(t, v)
		d := newDriver(t, v, 80, 24)
		d.keys("G", "l", "j", "tab", "j", "j", "j", "j", "j", "r")
		d.golden("restore_confirm")
		if readMemory(t, v, prefs) == "" || strings.Contains(d.frame(), "restore done") {
			t.Fatal("the file changed before the confirmation")
		}
		d.keys("y")
		d.golden("restore_done")
		if got := readMemory(t, v, prefs); strings.Contains(got, "Tabs") {
			t.Errorf("after the restore %s is %q, want the first version", prefs, got)
		}
		if r := d.m.hist.selected(); r == nil || r.Command != "restore" || d.m.hist.cursor != 0 {
			t.Errorf("after the restore the history selects %+v, want the new restore commit", r)
		}
	})
	t.Run("revert", func(t *testing.T) {
		v, _ := newVaultFormat(t, sealed)
		seed(t, v)
		d := newDriver(t, v, 80, 24)
		d.keys("tab", "j", "j", "j", "t")
		d.golden("revert_confirm")
		d.keys("enter")
		if got := readMemory(t, v, prefs); strings.Contains(got, "Tabs") || !strings.Contains(got, "British") {
			t.Errorf("after reverting the str_replace %s is %q", prefs, got)
		}
		if r := d.m.hist.selected(); r == nil || r.Command != "revert" {
			t.Errorf("after the revert the history selects %+v, want the revert commit", r)
		}
	})
	t.Run("rollback", func(t *testing.T) {
		v, _ := newVaultFormat(t, sealed)
		seed(t, v)
		d := newDriver(t, v, 80, 24)
		d.keys("tab", "j", "j", "j", "j", "R")
		d.golden("rollback_confirm")
		d.keys("esc")
		if d.m.mode != modeBrowse || d.m.status != "cancelled: nothing changed" || len(d.m.hist.recs) != 7 {
			t.Fatalf("esc in the confirmation: mode %v, status %q, %d commits", d.m.mode, d.m.status, len(d.m.hist.recs))
		}
		d.keys("R", "y")
		d.golden("rollback_done")
		if got := readMemory(t, v, "/memories/projects/memvault/todo.md"); got != "" {
			t.Errorf("after rolling back to before todo.md, it holds %q", got)
		}
	})
}

// TestCheckpoint names a commit from the UI and shows the name in the history.
func TestCheckpoint(t *testing.T) { bothFormats(t, testCheckpoint) }

func testCheckpoint(t *testing.T, sealed bool) {
	v, _ := newVaultFormat(t, sealed)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	d.keys("tab", "j", "j", "c")
	d.typeText("before-cleanup")
	d.golden("checkpoint_prompt")
	d.keys("enter")
	d.golden("checkpoint_done")
	cps, err := v.Checkpoints(context.Background())
	if err != nil || len(cps) != 1 || cps[0].Name != "before-cleanup" || cps[0].Commit != d.m.hist.recs[2].Commit {
		t.Errorf("Checkpoints() = %+v, %v; want before-cleanup at the third commit", cps, err)
	}
}
