package tui

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// A person could not take back what they just did in the interface: z undoes
// the last edit, restore, revert or rollback made here and ctrl+z redoes it,
// each as a new commit on top, never by rewriting the history.
func TestUndoRedo(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	orig := readMemory(t, v, prefsPath)
	d := newDriver(t, v, 80, 24)

	d.keys("z")
	if !strings.Contains(d.m.status, "nothing to undo") {
		t.Errorf("z before any action: status %q, want nothing to undo", d.m.status)
	}
	openEditor(t, d)
	d.typeText("Hi ")
	d.send(ctrl('s'))
	edited := readMemory(t, v, prefsPath)
	if edited != "Hi "+orig {
		t.Fatalf("the edit saved %q", edited)
	}
	before := history(t, v)

	d.keys("z")
	if got := readMemory(t, v, prefsPath); got != orig {
		t.Errorf("after z the file is %q, want %q", got, orig)
	}
	after := history(t, v)
	if len(after) != len(before)+1 || after[0].Command != "revert" || after[0].Source != before[0].Commit {
		t.Errorf("z made %d commits, the newest %+v; want one revert of the edit", len(after)-len(before), after[0])
	}
	for i := range before { // the history is only added to
		if after[i+1].Commit != before[i].Commit {
			t.Fatalf("after z the history differs below the new commit at %d", i)
		}
	}
	if r := d.m.hist.selected(); r == nil || r.Commit != after[0].Commit {
		t.Errorf("after z the history selects %+v, want the undo's commit", r)
	}

	d.send(ctrl('z'))
	if got := readMemory(t, v, prefsPath); got != edited {
		t.Errorf("after ctrl+z the file is %q, want the edit %q", got, edited)
	}
	// The vault records both as revert; the history says which they were.
	if rows := historyRows(d.frame()); len(rows) < 2 || !strings.Contains(rows[0], " redo ") || !strings.Contains(rows[1], " undo ") {
		t.Errorf("after z and ctrl+z the history's newest rows are\n%s\nwant a redo above an undo", strings.Join(rows, "\n"))
	}
	d.keys("z", "z")
	if got := readMemory(t, v, prefsPath); got != orig {
		t.Errorf("after ctrl+z and z the file is %q, want %q", got, orig)
	}
	if !strings.Contains(d.m.status, "nothing to undo") {
		t.Errorf("z with every action undone: status %q", d.m.status)
	}
	if n := len(history(t, v)); n != len(before)+3 {
		t.Errorf("undo, redo, undo made %d commits, want 3", n-len(before))
	}

	// A restore, then z: the file's history, its first version.
	d = newDriver(t, v, 80, 24)
	d.keys("G", "l", "j", "f", "tab", "G")
	if r := d.m.hist.selected(); r == nil || r.Command != "create" {
		t.Fatalf("the file's history selects %+v, want its create", r)
	}
	d.keys("r", "y")
	if r := d.m.hist.selected(); r == nil || r.Command != "restore" {
		t.Fatalf("the restore made no commit; history selects %+v", r)
	}
	d.keys("z")
	if got := readMemory(t, v, prefsPath); got != orig {
		t.Errorf("after the restore and z the file is %q, want %q", got, orig)
	}
}

// An undo that later changes conflict with is refused and changes nothing;
// the action stays undoable.
func TestUndoRefused(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	openEditor(t, d)
	d.typeText("Hi ")
	d.send(ctrl('s'))
	write(t, v, vault.Meta{Command: "str_replace", Agent: "claude"}, prefsPath, "Hello # Preferences\n")
	n := len(history(t, v))
	d.keys("z")
	if !d.m.isErr || !strings.Contains(d.m.status, "nothing changed") || len(history(t, v)) != n {
		t.Errorf("z over a conflicting change: status %q, %d new commits", d.m.status, len(history(t, v))-n)
	}
	if len(d.m.undo.done) != 1 {
		t.Errorf("after a refused undo %d actions are undoable, want 1", len(d.m.undo.done))
	}
}
