package tui

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// TestStaleResultsDropped sends results for what is no longer shown: the
// content pane and the history keep what the user is looking at.
func TestStaleResultsDropped(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	d.keys("G", "l", "j")
	want := d.m.content.want
	stale := contentReq{show: showFile, path: "/memories/scratch.md", rev: want.rev}
	d.send(contentMsg{req: stale, title: "stale", kind: bodyText, lines: []string{"stale"}})
	if d.m.content.title == "stale" || d.m.content.want != want {
		t.Errorf("a result for %v replaced the content for %v", stale, want)
	}
	n := len(d.m.hist.recs)
	d.send(logMsg{req: logReq{scope: "/memories/other", limit: 200}, recs: []vault.Record{{Commit: "x"}}})
	d.send(logMsg{req: logReq{scope: "", skip: n + 5, limit: 200}, recs: []vault.Record{{Commit: "y"}}})
	d.send(logMsg{req: logReq{scope: "", skip: n - 2, limit: 200}, recs: d.m.hist.recs[n-2:]}) // overlaps
	if len(d.m.hist.recs) != n {
		t.Errorf("history results for another scope or page changed it: %d records, want %d", len(d.m.hist.recs), n)
	}
	old, err := v.SnapshotAt(context.Background(), "main~2")
	if err != nil {
		t.Fatal(err)
	}
	head := d.m.snap.Commit()
	d.send(headMsg{snap: old, seq: d.m.headApplied - 1})
	if d.m.snap.Commit() != head {
		t.Errorf("a read of the head overtaken by a newer one moved the tree back to %s", old.Commit())
	}
	d.send(dirsMsg{commit: "0000000000000000000000000000000000000000", dirs: nil, err: errors.New("old")})
	if d.m.status != "" {
		t.Errorf("a listing for an old commit set the status to %q", d.m.status)
	}
}

// TestHistoryPages loads the history a page at a time as the cursor goes down.
func TestHistoryPages(t *testing.T) {
	v, _ := newVault(t)
	for i := range 20 {
		write(t, v, vault.Meta{Command: "create"}, fmt.Sprintf("/memories/f%02d.md", i), "x\n")
	}
	m := New(context.Background(), v, Options{Now: func() time.Time { return uiNow }, PollInterval: -1, PageSize: 4})
	d := &driver{tb: t, m: m, v: v}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.run(m.Init())
	// The first page, and the next ones while the cursor is within two screens
	// (7 rows each) of the end.
	if got := len(d.m.hist.recs); got < 4 || got > 20 || d.m.hist.done && got != 21 {
		t.Fatalf("after the first frame %d records are loaded", got)
	}
	d.keys("tab")
	for range 25 {
		d.keys("j")
	}
	if got := len(d.m.hist.recs); got != 21 || !d.m.hist.done {
		t.Errorf("after scrolling to the end %d records are loaded (done %v), want all 21", got, d.m.hist.done)
	}
	if r := d.m.hist.selected(); r == nil || r.Command != "init" {
		t.Errorf("the cursor is not on the first commit after scrolling down: %+v", r)
	}
}

func TestRelTime(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{-time.Minute, "future"},
		{10 * time.Second, "now"},
		{50 * time.Second, "1m ago"},
		{59 * time.Minute, "59m ago"},
		{3 * time.Hour, "3h ago"},
		{3 * 24 * time.Hour, "3d ago"},
		{90 * 24 * time.Hour, "3mo ago"},
		{800 * 24 * time.Hour, "2y ago"},
	}
	for _, tt := range tests {
		if got := relTime(now.Add(-tt.ago), now); got != tt.want {
			t.Errorf("relTime(now-%v) = %q, want %q", tt.ago, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a\tb", "a   b"},
		{"\x1b[31mred", `\x1b[31mred`},
		{"bell\x07", `bell\a`},
		{"rtl\u202eoverride", `rtl\u202eoverride`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"forged\nline\r", `forged\nline\r`},
		{"\x1b\tx", `\x1b` + "    x"},
		{"naïve 日本", "naïve 日本"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHumanSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{{0, "0B"}, {999, "999B"}, {1500, "1.5K"}, {20 << 10, "20K"}, {3 << 20, "3.0M"}}
	for _, tt := range tests {
		if got := humanSize(tt.n); got != tt.want {
			t.Errorf("humanSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestWrapLine(t *testing.T) {
	tests := []struct {
		in   string
		w    int
		want []string
	}{
		{"short", 10, []string{"short"}},
		{"two words", 5, []string{"two", "words"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
	}
	for _, tt := range tests {
		got := wrapLine(tt.in, tt.w)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("wrapLine(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
}

// TestLayoutFits checks that every frame is exactly as large as the terminal,
// from the smallest supported size up.
func TestLayoutFits(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	for _, size := range [][2]int{{80, 24}, {100, 30}, {119, 40}, {120, 30}, {140, 40}, {159, 40}, {160, 40}, {200, 60}, {60, 16}} {
		d.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(d.frame(), "\n")
		if len(lines) != size[1] {
			t.Errorf("at %dx%d the frame has %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := len([]rune(l)); w != size[0] {
				t.Errorf("at %dx%d line %d is %d cells wide: %q", size[0], size[1], i, w, l)
				break
			}
		}
	}
}

// TestColors draws in colour unless NO_COLOR asked for none, and picks the
// palette for the terminal's background.
func TestColors(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24) // NoColor
	if s := d.m.View().Content; strings.Contains(s, "\x1b[38;") || strings.Contains(s, "\x1b[48;") {
		t.Errorf("with NoColor the frame still sets colours")
	}
	if !strings.Contains(d.m.View().Content, "\x1b[7") && !strings.Contains(d.m.View().Content, ";7m") {
		t.Errorf("with NoColor the selection is not in reverse video")
	}
	m := New(context.Background(), v, Options{Now: func() time.Time { return uiNow }, PollInterval: -1})
	c := &driver{tb: t, m: m, v: v}
	c.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	c.run(m.Init())
	dark := c.m.View().Content
	if !strings.Contains(dark, "\x1b[38;") {
		t.Errorf("in colour the frame sets no foreground colour")
	}
	c.send(tea.BackgroundColorMsg{Color: color.White})
	if c.m.dark {
		t.Errorf("after a white background the model still thinks it is dark")
	}
	if light := c.m.View().Content; light == dark {
		t.Errorf("the light palette draws the same frame as the dark one")
	}
}
