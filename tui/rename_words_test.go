package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// rename moves a memory file as the memory tool's rename does.
func rename(tb testing.TB, v *vault.Vault, from, to string) {
	tb.Helper()
	err := v.Update(context.Background(), vault.Meta{Command: "rename", Agent: "claude"}, func(tx *vault.Tx) error {
		return tx.Rename(from, to)
	})
	if err != nil {
		tb.Fatalf("rename %s %s: %v", from, to, err)
	}
}

// The confirmation of a revert or a rollback across a rename once said the
// opposite of what it would do: t on "rename test_plan.md → done/test_plan.md"
// read "move test_plan.md back to done/test_plan.md". It names the file where
// it is now first, then where it goes back to.
func TestRenameConfirmationSaysWhereTheFileGoes(t *testing.T) {
	v, _ := newVault(t)
	write(t, v, vault.Meta{Command: "create", Agent: "claude"}, "/memories/test_plan.md", "- plan\n")
	rename(t, v, "/memories/test_plan.md", "/memories/done/test_plan.md")
	const want = "move /memories/done/test_plan.md back to /memories/test_plan.md"
	for _, k := range []string{"t", "R"} {
		d := newDriver(t, v, 100, 30)
		d.keys("tab")
		if k == "R" {
			d.keys("j")
		}
		d.keys(k)
		if d.m.mode != modeDialog {
			t.Fatalf("%s: no confirmation:\n%s", k, d.frame())
		}
		if body := strings.Join(d.m.dialog.lines, "\n"); !strings.Contains(body, want) {
			t.Errorf("%s: the confirmation says\n%s\nwant it to say %q", k, body, want)
		}
		if k == "t" {
			d.golden("revert_rename_confirm")
		}
		d.keys("y")
		if readMemory(t, v, "/memories/test_plan.md") != "- plan\n" || readMemory(t, v, "/memories/done/test_plan.md") != "" {
			t.Fatalf("%s: the file did not go back to test_plan.md", k)
		}
		rename(t, v, "/memories/test_plan.md", "/memories/done/test_plan.md")
	}
}

// A rollback over more files than its confirmation lists once ended with
// "…and 5191 more", hiding how many of them it deletes. It counts them all.
func TestRollbackConfirmationCountsEveryFile(t *testing.T) {
	v, _ := newVault(t)
	for i := range 6 {
		write(t, v, vault.Meta{Command: "create"}, fmt.Sprintf("/memories/old%d.md", i), "old\n")
	}
	for i := range 4 {
		write(t, v, vault.Meta{Command: "str_replace"}, fmt.Sprintf("/memories/old%d.md", i), "changed\n")
	}
	for i := range 5 {
		write(t, v, vault.Meta{Command: "create"}, fmt.Sprintf("/memories/new%d.md", i), "new\n")
	}
	write(t, v, vault.Meta{Command: "delete"}, "/memories/old5.md", "")
	d := newDriver(t, v, 100, 30)
	d.keys("tab", "G", "k", "R") // back to the second commit: old0.md alone
	if d.m.mode != modeDialog {
		t.Fatalf("no confirmation:\n%s", d.frame())
	}
	body := strings.Join(d.m.dialog.lines, "\n")
	if want := "in all: 9 deleted, 1 changed"; !strings.Contains(body, want) {
		t.Errorf("the confirmation says\n%s\nwant %q", body, want)
	}
}

// e with a directory selected in the tree once edited the file shown last,
// one a commit of the history had changed. It says a directory is selected;
// a file selected afterwards is the one edited.
func TestEditActsOnTheSelection(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 100, 30)
	d.keys("tab", "j", "j", "j") // the str_replace of preferences.md
	d.keys("shift+tab", "G")     // the tree, on user/
	if n := d.m.tree.selected(); n == nil || n.path != "/memories/user" {
		t.Fatalf("the tree selects %v, want /memories/user", n)
	}
	for _, k := range []string{"e", "b"} {
		d.keys(k)
		if d.m.mode != modeBrowse || d.m.content.want.show == showBlame || !strings.Contains(d.m.status, "user is a directory") {
			t.Errorf("%s on a directory: mode %v, content %v, status %q", k, d.m.mode, d.m.content.want, d.m.status)
		}
	}
	d.keys("l", "j", "e")
	if d.m.mode != modeEdit || d.m.editor.path != prefsPath {
		t.Errorf("e on preferences.md: mode %v, status %q", d.m.mode, d.m.status)
	}
}

// In a file's history, which follows the file back through its renames, a
// commit from before a rename once showed nothing with v, and r said "there
// was no file … at" it: both looked for the file under its name now. They
// use the name it had then.
func TestFileHistoryBeforeRename(t *testing.T) {
	v, _ := newVault(t)
	const old, cur = "/memories/draft.md", "/memories/plans/final.md"
	write(t, v, vault.Meta{Command: "create", Agent: "claude"}, old, "first\n")
	write(t, v, vault.Meta{Command: "str_replace", Agent: "claude"}, old, "second\n")
	rename(t, v, old, cur)
	write(t, v, vault.Meta{Command: "str_replace", Agent: "claude"}, cur, "third\n")
	d := newDriver(t, v, 100, 30)
	d.keys("j", "l", "j") // plans/final.md
	if n := d.m.tree.selected(); n == nil || n.path != cur {
		t.Fatalf("the tree selects %v", n)
	}
	d.keys("f", "tab")
	if len(d.m.hist.recs) != 4 {
		t.Fatalf("the file's history holds %d commits, want 4", len(d.m.hist.recs))
	}
	d.keys("j", "j", "v") // the str_replace of draft.md
	if !strings.Contains(d.frame(), "second") || d.m.content.kind != bodyText {
		t.Fatalf("v before the rename:\n%s", d.frame())
	}
	d.golden("as_of_before_rename")
	d.keys("v", "r")
	if d.m.mode != modeDialog {
		t.Fatalf("r before the rename: %q", d.m.status)
	}
	d.keys("y")
	if got := readMemory(t, v, cur); got != "second\n" {
		t.Errorf("after the restore %s holds %q, want the text draft.md had", cur, got)
	}
	if r := d.m.hist.selected(); r == nil || r.Command != "restore" {
		t.Errorf("after the restore the history selects %+v", r)
	}
	d.keys("z") // undone like any other
	if got := readMemory(t, v, cur); got != "third\n" {
		t.Errorf("after z %s holds %q", cur, got)
	}
}
