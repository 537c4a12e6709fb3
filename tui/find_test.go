package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// / in the file view once became the tree's filter and replaced the file with
// "0 files, 0 directories"; n and N did nothing. With the focus on the
// content, / finds a text in it: the view goes to the first match and marks
// each, n and N go from one to the next, round the end, and esc clears it.
func TestFindInContent(t *testing.T) {
	v, _ := newVault(t)
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		switch i {
		case 40, 80:
			fmt.Fprintf(&b, "line %d holds the Needle and another needle\n", i)
		default:
			fmt.Fprintf(&b, "line %d is hay\n", i)
		}
	}
	write(t, v, vault.Meta{Command: "create"}, "/memories/hay.md", b.String())
	d := newDriver(t, v, 80, 24)
	d.keys("j", "enter", "/")
	d.typeText("needle")
	d.keys("enter")
	d.golden("find_first")
	if len(d.m.tree.rows) != 2 || d.m.content.want.path != "/memories/hay.md" {
		t.Fatalf("/ in the content filtered the tree or left the file:\n%s", d.frame())
	}
	top := func() int { return d.m.content.rows[d.m.content.offset].num }
	for _, step := range []struct {
		key        string
		match, top int
	}{{"", 1, 38}, {"n", 2, 38}, {"n", 3, 78}, {"n", 4, 78}, {"n", 1, 38}, {"N", 4, 79}} {
		if step.key != "" {
			d.keys(step.key)
		}
		want := fmt.Sprintf("match %d of 4", step.match)
		if !strings.Contains(d.m.status, want) || top() != step.top {
			t.Errorf("after %q the status is %q and the top row is line %d; want %q, line %d", step.key, d.m.status, top(), want, step.top)
		}
	}
	d.keys("/")
	d.typeText("Needle") // a capital: case counts
	d.keys("enter")
	if !strings.Contains(d.m.status, "of 2") {
		t.Errorf("a search with a capital letter: %q, want 2 matches", d.m.status)
	}
	d.keys("esc")
	if d.m.content.find.text != "" || strings.Contains(d.m.statusBar(), "match") {
		t.Errorf("esc left the search %q", d.m.content.find.text)
	}
}

// A long line could only wrap, as lazygit's and tig's diffs can be told not
// to. w cuts long lines at the pane's edge, ← and → scroll them, a diff line
// keeps its sign however far it is scrolled, a find scrolls to its match,
// and w wraps them again.
func TestNoWrap(t *testing.T) {
	v, _ := newVault(t)
	long := "start " + strings.Repeat("middle ", 20) + "the end"
	write(t, v, vault.Meta{Command: "create"}, "/memories/long.md", "short\n")
	write(t, v, vault.Meta{Command: "str_replace"}, "/memories/long.md", long+"\nshort\n")
	d := newDriver(t, v, 80, 24)
	d.keys("tab", "enter", "w")
	add := func() string {
		for _, r := range d.m.content.rows {
			if strings.HasPrefix(r.text, "+") && !strings.HasPrefix(r.text, "+++") {
				return r.text
			}
		}
		return ""
	}
	if got := add(); !strings.HasPrefix(got, "+start middle") || !strings.HasSuffix(got, "…") || len(d.m.content.rows) != len(d.m.content.lines)+len(d.m.content.header) {
		t.Fatalf("w did not cut the long line: %q, %d rows", got, len(d.m.content.rows))
	}
	d.golden("nowrap")
	d.keys("right", "right")
	if got := add(); !strings.HasPrefix(got, "+") || strings.Contains(got, "start") {
		t.Errorf("→ did not scroll the line, or it lost its sign: %q", got)
	}
	d.keys("/")
	d.typeText("the end")
	d.keys("enter")
	if got := add(); !strings.Contains(got, "the end") {
		t.Errorf("a find did not scroll to its match: %q (hscroll %d, status %q)", got, d.m.content.hscroll, d.m.status)
	}
	d.keys("w")
	if got := add(); !strings.HasPrefix(got, "+start middle") || strings.Contains(got, "…") {
		t.Errorf("w did not wrap the line again: %q", got)
	}
}
