package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

const prefsPath = "/memories/user/preferences.md"

// ctrl returns the key press of ctrl and r; alt that of alt and r.
func ctrl(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl} }
func alt(r rune) tea.KeyPressMsg  { return tea.KeyPressMsg{Code: r, Mod: tea.ModAlt} }

// openEditor selects preferences.md in the tree and presses e.
func openEditor(t *testing.T, d *driver) {
	t.Helper()
	d.keys("G", "l", "j")
	if n := d.m.tree.selected(); n == nil || n.path != prefsPath {
		t.Fatalf("the tree selects %v, want %s", n, prefsPath)
	}
	d.keys("e")
	if d.m.mode != modeEdit || d.m.editor == nil {
		t.Fatalf("e on a file: mode %v, status %q; want the editor", d.m.mode, d.m.status)
	}
}

func commitCount(t *testing.T, v *vault.Vault) int {
	t.Helper()
	recs, err := v.Log(context.Background(), vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// A person could not edit a memory from the interface: e opens the file in a
// text area, ctrl+s saves it as one commit of its own, shown at once.
func TestEditInPlace(t *testing.T) {
	for _, sz := range [][2]int{{160, 45}, {80, 24}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			v, _ := newVault(t)
			seed(t, v)
			before := readMemory(t, v, prefsPath)
			n := commitCount(t, v)
			d := newDriver(t, v, sz[0], sz[1])
			openEditor(t, d)
			d.typeText("Hi ")
			d.golden(fmt.Sprintf("edit_%dx%d", sz[0], sz[1]))
			if got := readMemory(t, v, prefsPath); got != before {
				t.Fatalf("typing in the editor changed the file to %q before a save", got)
			}
			d.send(ctrl('s'))
			if got, want := readMemory(t, v, prefsPath), "Hi "+before; got != want {
				t.Errorf("after ctrl+s the file is %q, want %q", got, want)
			}
			if got := commitCount(t, v); got != n+1 {
				t.Errorf("the save made %d commits, want 1", got-n)
			}
			r := d.m.hist.selected()
			if d.m.mode != modeBrowse || r == nil || r.Command != "edit" || r.Path != prefsPath || r.Agent != "memvault-ui" {
				t.Errorf("after the save: mode %v, history selects %+v; want browse and the edit commit", d.m.mode, r)
			}
			if !strings.Contains(d.m.status, "saved") {
				t.Errorf("after the save the status says %q", d.m.status)
			}
		})
	}
}

// Esc leaves the editor with nothing written; with unsaved changes it asks
// for a second esc first.
func TestEditCancel(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	before, n := readMemory(t, v, prefsPath), commitCount(t, v)
	d := newDriver(t, v, 80, 24)
	openEditor(t, d)
	d.typeText("scratch")
	d.keys("esc")
	if d.m.mode != modeEdit || !strings.Contains(d.m.status, "unsaved") {
		t.Fatalf("one esc on unsaved changes: mode %v, status %q; want the editor and a warning", d.m.mode, d.m.status)
	}
	d.keys("esc")
	if d.m.mode != modeBrowse || d.m.editor != nil {
		t.Errorf("a second esc left mode %v", d.m.mode)
	}
	if readMemory(t, v, prefsPath) != before || commitCount(t, v) != n {
		t.Errorf("cancelling wrote something")
	}
	openEditor(t, d) // unchanged: one esc leaves
	d.keys("esc")
	if d.m.mode != modeBrowse {
		t.Errorf("esc on an unchanged edit left mode %v", d.m.mode)
	}
}

// A save over a change another writer made since the editor opened is
// refused, the other writer's version kept, and the person's text left in
// the editor.
func TestEditRefusedWhenChangedUnderneath(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	openEditor(t, d)
	d.typeText("mine ")
	const theirs = "# Preferences\n\nwritten by the agent meanwhile\n"
	write(t, v, vault.Meta{Command: "create", Agent: "claude"}, prefsPath, theirs)
	n := commitCount(t, v)
	d.send(ctrl('s'))
	if got := readMemory(t, v, prefsPath); got != theirs {
		t.Errorf("after a refused save the file is %q, want the agent's %q", got, theirs)
	}
	if commitCount(t, v) != n {
		t.Errorf("a refused save made a commit")
	}
	if d.m.mode != modeEdit || !strings.HasPrefix(d.m.editor.ta.Value(), "mine ") || !d.m.isErr ||
		!strings.Contains(d.m.status, "changed since you opened it") {
		t.Errorf("after a refused save: mode %v, status %q; want the editor with the text and a clear refusal", d.m.mode, d.m.status)
	}
}

// The text area drops control characters and turns tabs into spaces: a file
// holding them is not opened, so a save cannot change what the person did
// not touch, and nothing raw reaches the terminal.
func TestEditRefusesWhatTheAreaWouldChange(t *testing.T) {
	v, _ := newVault(t)
	write(t, v, vault.Meta{Command: "create"}, "/memories/tabs.md", "a\tb\n")
	write(t, v, vault.Meta{Command: "create"}, "/memories/zz.md", "x\x1b]0;t\x07\n")
	d := newDriver(t, v, 80, 24)
	for range 2 {
		d.keys("j", "e")
		if d.m.mode != modeBrowse || !d.m.isErr || !strings.Contains(d.m.status, "memvault edit") {
			t.Errorf("e on %s: mode %v, status %q; want a refusal naming memvault edit", d.m.tree.selected().path, d.m.mode, d.m.status)
		}
	}
}

// A file longer than the text area's default cap of 99 lines keeps every
// line through an edit.
func TestEditLongFile(t *testing.T) {
	v, _ := newVault(t)
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	write(t, v, vault.Meta{Command: "create"}, "/memories/long.md", b.String())
	d := newDriver(t, v, 80, 24)
	d.keys("j", "e")
	d.typeText("x")
	d.send(ctrl('s'))
	if got, want := readMemory(t, v, "/memories/long.md"), "x"+b.String(); got != want {
		t.Errorf("after an edit the 300-line file has %d bytes, want %d", len(got), len(want))
	}
}

// In the editor alt+n and alt+p go to the conflict markers a merge left.
func TestEditConflictMarkers(t *testing.T) {
	v, _ := newVault(t)
	text := "a\n<<<<<<< ours (host, time)\nx\n=======\ny\n>>>>>>> theirs (remote, time)\nb\nc\n<<<<<<< ours (host, time)\np\n=======\nq\n>>>>>>> theirs (remote, time)\n"
	write(t, v, vault.Meta{Command: "create"}, "/memories/c.md", text)
	d := newDriver(t, v, 80, 24)
	d.keys("j", "e")
	for _, step := range []struct {
		key  tea.KeyPressMsg
		line int
	}{{alt('n'), 1}, {alt('n'), 8}, {alt('n'), 8}, {alt('p'), 1}} {
		d.send(step.key)
		if got := d.m.editor.ta.Line(); got != step.line {
			t.Errorf("after %s the cursor is on line %d, want %d", step.key, got, step.line)
		}
	}
}

// ctrl+c in the editor once quit at once and dropped unsaved text; esc
// asked. ctrl+c asks too: a second ctrl+c in a row quits, any other key
// asks again at the next; with nothing changed it quits at once.
func TestEditCtrlCAsks(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	openEditor(t, d)
	d.typeText("draft")
	d.send(ctrl('c'))
	if d.quit || !strings.Contains(d.m.status, "ctrl+c again quits") {
		t.Fatalf("ctrl+c on unsaved text: quit %v, status %q", d.quit, d.m.status)
	}
	d.typeText("!")
	d.send(ctrl('c'))
	if d.quit {
		t.Fatal("ctrl+c after a key quit without asking again")
	}
	d.send(ctrl('c'))
	if !d.quit {
		t.Error("a second ctrl+c in a row did not quit")
	}

	d = newDriver(t, v, 80, 24)
	openEditor(t, d)
	d.send(ctrl('c'))
	if !d.quit {
		t.Error("ctrl+c with nothing changed did not quit")
	}
}
