package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// At 160 columns the history once cut paths (a rename read "rename
// notes/ideas/f5.md → no… builder") and never showed the tool-use id, while
// the content pane beside it stood mostly empty: the history takes the room
// its rows need, and every path shows whole while there is room for it.
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
	frame := d.frame()
	whole := "notes/ideas/f5.md → notes/archive/ideas-f5.md"
	if !strings.Contains(frame, whole) {
		t.Errorf("at 160x45 the rename's paths are not whole (%q):\n%s", whole, frame)
	}
	for _, id := range []string{"toolu_09Yz", "toolu_01Abc"} {
		if !strings.Contains(frame, id) {
			t.Errorf("at 160x45 the tool-use id %s does not show:\n%s", id, frame)
		}
	}
	for _, sz := range [][2]int{{80, 24}, {40, 10}} {
		d.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		d.keys("tab")
		d.golden("history_" + map[int]string{80: "80x24", 40: "40x10"}[sz[0]])
		d.keys("shift+tab")
	}
}
