package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// At 160 columns the history once cut paths while the content pane beside it
// stood mostly empty; then, given the room its rows needed, it took the
// content pane down to 60 columns at 160 (110 at 158) and to 60 of 200 at
// 200x60. The history takes two fifths of the width and up to half when its
// rows need it; the content keeps the rest, and never shrinks as the screen
// grows past 160 columns.
func TestHistoryUsesTheRoom(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	ctx := context.Background()
	const from, to = "/memories/notes/ideas/f5.md", "/memories/notes/archive/ideas-f5.md"
	write(t, v, vault.Meta{Command: "create", ToolUseID: "toolu_08Vwx", Agent: "builder"}, from, "an idea\n")
	err := v.Update(ctx, vault.Meta{Command: "rename", ToolUseID: "toolu_09Yz", Agent: "builder"}, func(tx *vault.Tx) error {
		return tx.Rename(from, to)
	})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, v, 160, 45)
	d.golden("history_160x45")
	if w := d.m.lay.content.w; w < 80 {
		t.Errorf("at 160x45 the content pane is %d columns wide, want at least 80", w)
	}
	for _, r := range historyRows(d.frame()) {
		if !strings.Contains(r, " init ") && !strings.Contains(r, "builder") && !strings.Contains(r, "claude") {
			t.Errorf("at 160x45 a history row lacks its agent: %q", r)
		}
	}
	d.send(tea.WindowSizeMsg{Width: 200, Height: 60})
	frame := d.frame()
	if w := d.m.lay.content.w; w < 100 {
		t.Errorf("at 200x60 the content pane is %d columns wide, want at least 100", w)
	}
	if whole := "notes/ideas/f5.md → notes/archive/ideas-f5.md"; !strings.Contains(frame, whole) {
		t.Errorf("at 200x60 the rename's paths are not whole (%q):\n%s", whole, frame)
	}
	for _, id := range []string{"toolu_09Yz", "toolu_01Abc"} {
		if !strings.Contains(frame, id) {
			t.Errorf("at 200x60 the tool-use id %s does not show:\n%s", id, frame)
		}
	}
	last := 0
	for w := 160; w <= 300; w += 7 {
		d.send(tea.WindowSizeMsg{Width: w, Height: 50})
		if cw := d.m.lay.content.w; cw < last || cw < w/2 {
			t.Errorf("at %d columns the content pane is %d wide: under half, or narrower than at %d columns (%d)", w, cw, w-7, last)
		}
		last = d.m.lay.content.w
	}
	for _, sz := range [][2]int{{80, 24}, {40, 10}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		d.keys("tab")
		d.golden("history_" + map[int]string{80: "80x24", 40: "40x10"}[sz[0]])
		d.keys("shift+tab")
	}
}
