package tui

import (
	"strings"
	"testing"
)

// The interface could not make, move or delete a file, as lazygit's panels
// make and delete branches. n asks for a path and opens the new file in the
// editor (ctrl+s creates it), M moves the selected file, d deletes it after
// a confirmation; each is one commit, and z takes it back.
func TestNewMoveDelete(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 100, 30)
	n := commitCount(t, v)

	d.keys("j", "n") // projects/ selected: the new file goes there
	if d.m.input.Value() != "/memories/projects/" {
		t.Fatalf("n offers %q", d.m.input.Value())
	}
	d.typeText("ideas.md")
	d.keys("enter")
	d.typeText("a new idea")
	d.golden("new_file")
	d.send(ctrl('s'))
	if got := readMemory(t, v, "/memories/projects/ideas.md"); got != "a new idea" || commitCount(t, v) != n+1 {
		t.Fatalf("after ctrl+s the new file holds %q; %d commits", got, commitCount(t, v)-n)
	}
	if r := d.m.hist.selected(); r == nil || r.Command != "create" {
		t.Errorf("the history selects %+v, want the create", r)
	}

	d.keys("g", "G", "l", "j", "M") // user/preferences.md
	d.keys("ctrl+u")
	for range len("/memories/user/preferences.md") {
		d.keys("backspace")
	}
	d.typeText("/memories/done/prefs.md")
	d.keys("enter")
	if readMemory(t, v, prefsPath) != "" || !strings.Contains(readMemory(t, v, "/memories/done/prefs.md"), "British") {
		t.Fatalf("M did not move the file: %q", d.m.status)
	}
	if r := d.m.hist.selected(); r == nil || r.Command != "rename" || r.NewPath != "/memories/done/prefs.md" {
		t.Errorf("the history selects %+v, want the rename", r)
	}
	d.keys("z")
	if !strings.Contains(readMemory(t, v, prefsPath), "British") {
		t.Errorf("z did not move it back: %q", d.m.status)
	}

	for d.m.tree.selected().path != "/memories/projects" {
		d.keys("k")
	}
	d.keys("d")
	if d.m.mode != modeDialog || !strings.Contains(strings.Join(d.m.dialog.lines, " "), "the 3 files in it") {
		t.Fatalf("d on projects/: mode %v, %q", d.m.mode, d.m.status)
	}
	d.golden("delete_confirm")
	d.keys("y")
	if readMemory(t, v, "/memories/projects/memvault/notes.md") != "" {
		t.Errorf("d and y left projects/: %q", d.m.status)
	}
	d.keys("z")
	if readMemory(t, v, "/memories/projects/memvault/notes.md") == "" {
		t.Errorf("z did not bring projects/ back: %q", d.m.status)
	}
}
