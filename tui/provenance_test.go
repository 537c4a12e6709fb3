package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
)

// TestBlameFrames: b on a file shows who wrote each line; moving down and
// enter opens the commit of the selected line.
func TestBlameFrames(t *testing.T) { bothFormats(t, testBlameFrames) }

func testBlameFrames(t *testing.T, sealed bool) {
	v, _ := newVaultFormat(t, sealed)
	seed(t, v)
	write(t, v, vault.Meta{Command: "str_replace", Agent: "bob", ToolUseID: "toolu_07Stu"}, "/memories/user/preferences.md",
		"# Preferences\n\n- Answers in British English\n- Tabs, not spaces\n")
	if _, err := v.Restore(context.Background(), vault.Meta{Agent: "alice"}, "/memories/user/preferences.md", "main~1"); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, v, 100, 30)
	d.keys("G", "l", "j") // user/preferences.md
	d.keys("b")
	d.golden("blame")
	if d.m.focus != paneContent || d.m.content.kind != bodyBlame || len(d.m.content.prov) != 5 {
		t.Fatalf("after b: focus %v, content kind %v with %d rows; want the blame of 5 lines, focused", d.m.focus, d.m.content.kind, len(d.m.content.prov))
	}
	d.keys("j", "j", "j", "j")
	d.golden("blame_cursor")
	d.keys("enter")
	want := d.m.content.prov[4].commit
	if d.m.content.want.show != showCommit || d.m.content.want.rev != want {
		t.Fatalf("enter on line 5 shows %+v, want the commit %s", d.m.content.want, want)
	}
	d.golden("blame_open")
}

// TestSearchFrames: s searches every file's content; enter opens the file at
// the line.
func TestSearchFrames(t *testing.T) { bothFormats(t, testSearchFrames) }

func testSearchFrames(t *testing.T, sealed bool) {
	v, _ := newVaultFormat(t, sealed)
	seed(t, v)
	d := newDriver(t, v, 100, 30)
	d.keys("s")
	d.typeText("(?i)COMMIT")
	d.golden("search_typing")
	d.keys("enter")
	d.golden("search")
	if len(d.m.content.prov) != 2 {
		t.Fatalf("search found %d lines, want 2", len(d.m.content.prov))
	}
	d.keys("j", "enter")
	if d.m.content.want.show != showFile || d.m.content.want.path != "/memories/user/preferences.md" || d.m.content.cursor != 3 {
		t.Fatalf("enter on the second match shows %+v at line index %d, want preferences.md at index 3", d.m.content.want, d.m.content.cursor)
	}
	d.golden("search_open")
}

// TestPickaxeFrames: S keeps the commits whose change adds or removes a text;
// esc shows every commit again.
func TestPickaxeFrames(t *testing.T) { bothFormats(t, testPickaxeFrames) }

func testPickaxeFrames(t *testing.T, sealed bool) {
	v, _ := newVaultFormat(t, sealed)
	seed(t, v)
	d := newDriver(t, v, 100, 30)
	d.keys("S")
	d.typeText("Tabs")
	d.keys("enter")
	d.golden("pickaxe")
	if len(d.m.hist.recs) != 1 || d.m.hist.recs[0].Command != "str_replace" {
		t.Fatalf("history -S Tabs = %d commits, want the one str_replace", len(d.m.hist.recs))
	}
	d.keys("esc")
	if d.m.hist.pickaxe != "" || len(d.m.hist.recs) != 7 || strings.Contains(d.m.hist.Title(), "-S") {
		t.Errorf("after esc: pickaxe %q, %d commits, title %q; want all 7", d.m.hist.pickaxe, len(d.m.hist.recs), d.m.hist.Title())
	}
}

// TestSearchSaysWhatItLeftOut: a search past an entry that is no memory file
// memvault can read (put in the tree by hand with git) shows the matches of
// the rest, says in its title that it is incomplete, and names the entry,
// escaped, with why it was not searched.
func TestSearchSaysWhatItLeftOut(t *testing.T) { bothFormats(t, testSearchSaysWhatItLeftOut) }

func testSearchSaysWhatItLeftOut(t *testing.T, sealed bool) {
	v, _ := newVaultFormat(t, sealed)
	seed(t, v)
	if err := v.Flush(context.Background()); err != nil { // for git to see its objects
		t.Fatal(err)
	}
	h := gittest.Damage(t, v.Dir())
	blob := h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))
	h.Change("memories/bad\x1b[2K.md", gittest.TreeEntry{Mode: "100644", Hash: blob}, "by hand\n")
	d := newDriver(t, v, 120, 30)
	d.keys("s")
	d.typeText("(?i)COMMIT")
	d.keys("enter")
	frame := d.frame()
	for _, want := range []string{"search (?i)COMMIT · 2 lines in 2 files · incomplete", "Not searched, as no memory file memvault can read (1):", `/memories/bad\x1b[2K.md`} {
		if !strings.Contains(frame, want) {
			t.Errorf("the frame does not show %q:\n%s", want, frame)
		}
	}
	if strings.Contains(d.m.View().Content, "\x1b[2K") {
		t.Error("the frame holds the name's escape sequence raw")
	}
	if len(d.m.content.prov) != 2 {
		t.Fatalf("search found %d lines, want 2", len(d.m.content.prov))
	}
}
