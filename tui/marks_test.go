package tui

import (
	"fmt"
	"strings"
	"testing"
)

// v with two commits marked once did nothing and said nothing: marks show a
// hint, v shows the diff from the older marked commit to the newer, whichever
// was marked first, and moving on shows the selected commit again.
func TestTwoMarksAndV(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	all := history(t, v)
	for _, sz := range [][2]int{{160, 45}, {80, 24}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newDriver(t, v, sz[0], sz[1])
			d.keys("tab", "j", "space")
			if !strings.Contains(d.m.status, "mark another") {
				t.Errorf("after one mark the status says %q, want how to diff", d.m.status)
			}
			d.keys("v")
			if !strings.Contains(d.m.status, "mark a second") || d.m.content.want.show != showCommit {
				t.Errorf("v with one mark: status %q, content %+v; want a hint and the commit", d.m.status, d.m.content.want)
			}
			d.keys("j", "j", "j", "space")
			if d.m.content.want.show != showCommit {
				t.Errorf("two marks alone show %+v, want the selected commit until v", d.m.content.want)
			}
			d.keys("v")
			want := contentReq{show: showBetween, from: all[4].Commit, rev: all[1].Commit}
			if d.m.content.want != want {
				t.Errorf("v with two marks shows %+v, want the diff %s..%s", d.m.content.want, short(want.from), short(want.rev))
			}
			d.golden(fmt.Sprintf("diff_marks_%dx%d", sz[0], sz[1]))
			if f := d.frame(); !strings.Contains(f, "+- Tabs, not spaces") && sz[0] >= 160 {
				t.Errorf("the diff between the marks lacks the line the str_replace added:\n%s", f)
			}
			d.keys("shift+tab", "k")
			if d.m.content.want.show != showCommit {
				t.Errorf("after moving on the content shows %+v, want the selected commit", d.m.content.want)
			}
		})
	}
}
