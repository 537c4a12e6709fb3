package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/memvault/memvault/vault"
)

// conflicted writes two files as a sync's merge leaves them, both sides
// between markers, and one it moved aside.
func conflicted(t *testing.T, v *vault.Vault) {
	t.Helper()
	m := vault.Meta{Command: "merge", Agent: "memvault"}
	write(t, v, m, "/memories/user/preferences.md",
		"# Preferences\n\n<<<<<<< ours (laptop, 2026-03-01 10:00)\n- Short commit messages\n=======\n- Long commit messages\n>>>>>>> theirs (origin, 2026-03-01 09:00)\n")
	write(t, v, m, "/memories/projects/memvault/a-rather-long-folder-name/notes.md",
		"<<<<<<< ours (laptop, 2026-03-01 10:00)\nx\n=======\ny\n>>>>>>> theirs (origin, 2026-03-01 09:00)\n")
	write(t, v, m, "/memories/projects/todo.md.conflict-theirs", "- [ ] theirs\n")
}

// Only the number of files in conflict showed, in the status bar: C lists
// them, with how each is in conflict, and enter opens the chosen one in the
// editor at its first conflict marker.
func TestConflictsListed(t *testing.T) {
	for _, sz := range [][2]int{{160, 45}, {80, 24}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			v, _ := newVault(t)
			seed(t, v)
			conflicted(t, v)
			d := newDriver(t, v, sz[0], sz[1])
			if bar := d.m.statusBar(); sz[0] > 80 && !strings.Contains(bar, "3 conflicts") {
				t.Errorf("the status bar is %q, want 3 conflicts", bar)
			}
			d.keys("C")
			if d.m.mode != modeConflicts {
				t.Fatalf("C with 3 files in conflict: mode %v, status %q; want the list", d.m.mode, d.m.status)
			}
			d.golden(fmt.Sprintf("conflicts_%dx%d", sz[0], sz[1]))
			frame := d.frame()
			for _, p := range []string{"user/preferences.md", "projects/todo.md.conflict-theirs"} {
				if sz[0] >= 80 && !strings.Contains(frame, p) {
					t.Errorf("the list does not show %s:\n%s", p, frame)
				}
			}
			var chosen string
			for i, c := range d.m.sync.conflicts() {
				if c.path == "/memories/user/preferences.md" {
					for range i {
						d.keys("j")
					}
					if d.m.conflictList.cursor != i {
						t.Fatalf("%d times j in the list: cursor on %d", i, d.m.conflictList.cursor)
					}
					chosen = c.path
				}
			}
			d.keys("enter")
			if d.m.mode != modeEdit || d.m.editor == nil || d.m.editor.path != chosen {
				t.Fatalf("enter on %s: mode %v, status %q; want it in the editor", chosen, d.m.mode, d.m.status)
			}
			if got := d.m.editor.ta.Line(); got != 2 {
				t.Errorf("the editor opens on line %d, want 2, the first conflict marker", got)
			}
			d.send(alt('n'))
			if !strings.Contains(d.m.status, "no further conflict marker") {
				t.Errorf("alt+n past the only conflict: status %q", d.m.status)
			}
		})
	}
}

// esc closes the list; C with nothing in conflict says so.
func TestConflictsNone(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	if strings.Contains(d.m.helpBar(), "conflicts") {
		t.Errorf("with nothing in conflict the help bar offers the list: %q", d.m.helpBar())
	}
	d.keys("C")
	if d.m.mode != modeBrowse || d.m.status != "no file is in conflict" {
		t.Errorf("C with nothing in conflict: mode %v, status %q", d.m.mode, d.m.status)
	}
	conflicted(t, v)
	d.send(pollMsg{})
	if !strings.Contains(ansi.Strip(d.m.helpBar()), "C conflicts") {
		t.Errorf("with files in conflict the help bar is %q, want C conflicts", d.m.helpBar())
	}
	d.keys("C", "esc")
	if d.m.mode != modeBrowse {
		t.Errorf("esc in the list: mode %v, want the panes", d.m.mode)
	}
}

// A file in conflict could only be settled in the editor, marker by marker:
// there was no take-ours or take-theirs. In the list of conflicts o keeps
// this vault's side of every conflict of the chosen file and t the remote's,
// as one commit that z takes back; the tree marks what is in conflict.
func TestTakeOursOrTheirs(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	conflicted(t, v)
	d := newDriver(t, v, 100, 30)
	if f := d.frame(); !strings.Contains(f, "user/                    conflict") {
		t.Errorf("the tree does not mark user/ in conflict:\n%s", f)
	}
	choose := func(p string) {
		t.Helper()
		d.keys("C")
		for i, c := range d.m.sync.conflicts() {
			if c.path == p {
				for range i {
					d.keys("j")
				}
				return
			}
		}
		t.Fatalf("%s is not listed", p)
	}
	choose(prefsPath)
	d.keys("t")
	if got := readMemory(t, v, prefsPath); got != "# Preferences\n\n- Long commit messages\n" {
		t.Errorf("after t the file is %q", got)
	}
	if r := d.m.hist.selected(); r == nil || r.Command != "resolve" {
		t.Errorf("the history selects %+v, want the resolve", r)
	}
	d.keys("z")
	if got := readMemory(t, v, prefsPath); !strings.Contains(got, "<<<<<<< ours") {
		t.Errorf("after z the file is %q, want its conflict back", got)
	}
	choose(prefsPath)
	d.keys("o")
	if got := readMemory(t, v, prefsPath); got != "# Preferences\n\n- Short commit messages\n" {
		t.Errorf("after o the file is %q", got)
	}
	if n := len(d.m.sync.conflicts()); n != 2 {
		t.Errorf("after o %d files are in conflict, want 2", n)
	}
}
