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
