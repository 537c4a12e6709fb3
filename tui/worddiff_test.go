package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

func TestWordDiff(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"the quick brown fox", "the quick red fox", "the quick [-brown-]{+red+} fox"},
		{"a b c", "a b c d", "a b c{+ d+}"},
		{"keep it short", "keep it", "keep it[- short-]"},
		{"", "new", "{+new+}"},
	} {
		if got := wordDiff(tc.a, tc.b); got != tc.want {
			t.Errorf("wordDiff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	got := wordDiffLines([]string{"@@ -1,3 +1,3 @@", " same", "-old one", "-gone", "+new one", " end"})
	want := []string{"@@ -1,3 +1,3 @@", " same", "~[-old-]{+new+} one", "-gone", " end"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wordDiffLines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Diffs showed only by lines: in a long line changed by one word, the word
// had to be found by eye. W shows them by words, as git diff --word-diff
// does, and again by lines.
func TestWordDiffView(t *testing.T) {
	v, _ := newVault(t)
	write(t, v, vault.Meta{Command: "create"}, "/memories/fox.md", "the quick brown fox jumps over the lazy dog\nsame\n")
	write(t, v, vault.Meta{Command: "str_replace"}, "/memories/fox.md", "the quick red fox jumps over the lazy dog\nsame\n")
	d := newDriver(t, v, 100, 30)
	d.keys("tab", "W")
	d.golden("word_diff")
	if !slices.Contains(d.m.content.lines, "~the quick [-brown-]{+red+} fox jumps over the lazy dog") {
		t.Errorf("W shows:\n%s", strings.Join(d.m.content.lines, "\n"))
	}
	d.keys("j", "k") // another commit and back: still by words
	if !slices.Contains(d.m.content.lines, "~the quick [-brown-]{+red+} fox jumps over the lazy dog") {
		t.Errorf("by words did not stay on:\n%s", strings.Join(d.m.content.lines, "\n"))
	}
	d.keys("W")
	if !slices.Contains(d.m.content.lines, "+the quick red fox jumps over the lazy dog") {
		t.Errorf("W again shows:\n%s", strings.Join(d.m.content.lines, "\n"))
	}
}

// A mark wrapped onto the next row goes on in its colour there.
func TestWordMarksAcrossRows(t *testing.T) {
	st := NewStyles(true, false)
	first, state := wordMarks("keep [-taken", 0, &st)
	if state != '-' || !strings.Contains(first, st.DiffDel.Render("[-taken")) {
		t.Errorf("first row %q ends in state %q", first, state)
	}
	second, state := wordMarks("out-]{+put+} after", state, &st)
	if state != 0 || !strings.Contains(second, st.DiffDel.Render("out-]")) || !strings.Contains(second, st.DiffAdd.Render("{+put+}")) {
		t.Errorf("second row %q ends in state %q", second, state)
	}
}
