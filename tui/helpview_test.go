package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// overlayBox finds the box titled title in frame and returns its body lines,
// failing unless its border is whole: corners, edges and a bottom line, all
// inside the screen.
func overlayBox(t *testing.T, frame, title string) []string {
	t.Helper()
	lines := strings.Split(frame, "\n")
	top, x := -1, -1
	for i, l := range lines {
		if j := strings.Index(l, "╭─ "+title); j >= 0 {
			top, x = i, len([]rune(l[:j]))
			break
		}
	}
	if top < 0 {
		t.Fatalf("no box %q in the frame:\n%s", title, frame)
	}
	r := []rune(lines[top])
	xe := x + 1
	for xe < len(r) && r[xe] != '╮' {
		xe++
	}
	if xe == len(r) {
		t.Fatalf("the top line of %q has no corner ╮:\n%s", title, frame)
	}
	var body []string
	for y := top + 1; ; y++ {
		if y == len(lines) {
			t.Fatalf("box %q has no bottom line on the screen:\n%s", title, frame)
		}
		r := []rune(lines[y])
		if len(r) <= xe {
			t.Fatalf("line %d of box %q is cut short:\n%s", y-top, title, frame)
		}
		if r[x] == '╰' {
			if r[xe] != '╯' || strings.Trim(string(r[x+1:xe]), "─") != "" {
				t.Fatalf("the bottom border of %q is broken: %q\n%s", title, string(r[x:xe+1]), frame)
			}
			return body
		}
		if r[x] != '│' || r[xe] != '│' {
			t.Fatalf("line %d of box %q has no side borders: %q\n%s", y-top, title, string(r[x:xe+1]), frame)
		}
		body = append(body, string(r[x+1:xe]))
	}
}

// The list of keys broke its border at 160x45, wrapped its fourth column into
// one long list at 80x24 and was cut off, with no way to scroll, at 40x10. At
// each size it is whole, its columns balanced, and every key can be read.
func TestHelpEverySize(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	var entries []*regexp.Regexp
	for _, g := range DefaultKeyMap().FullHelp() {
		for _, b := range g {
			entries = append(entries, regexp.MustCompile(`(^| )`+regexp.QuoteMeta(b.Help().Key)+` `+regexp.QuoteMeta(b.Help().Desc)+`( |$)`))
		}
	}
	for _, sz := range []struct{ w, h int }{{160, 45}, {80, 24}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			d := newDriver(t, v, sz.w, sz.h)
			d.keys("?")
			d.golden(fmt.Sprintf("help_%dx%d", sz.w, sz.h))
			// Balanced columns: no more rows than the keys need in as many
			// columns as the widest row holds.
			body := overlayBox(t, d.frame(), "Keys")
			cols := 0
			for _, l := range body {
				n := 0
				for _, re := range entries {
					if re.MatchString(strings.Join(strings.Fields(l), " ")) {
						n++
					}
				}
				cols = max(cols, n)
			}
			if rows := (len(entries) + cols - 1) / max(cols, 1); len(body) > rows && len(body) < sz.h-2 {
				t.Errorf("the box has %d rows for %d keys in %d columns, want %d: a column runs on", len(body), len(entries), cols, rows)
			}
			// Scrolling shows every key whole on one line.
			seen := map[string]bool{}
			for range len(entries) {
				for _, l := range overlayBox(t, d.frame(), "Keys") {
					seen[strings.Join(strings.Fields(l), " ")] = true
				}
				d.keys("j")
			}
		next:
			for _, re := range entries {
				for l := range seen {
					if re.MatchString(l) {
						continue next
					}
				}
				t.Errorf("no line of the help matches %v", re)
			}
			d.keys("esc")
			if d.m.mode != modeBrowse {
				t.Errorf("esc in the help left mode %v", d.m.mode)
			}
		})
	}
}
