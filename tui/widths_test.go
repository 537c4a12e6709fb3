package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// At the common widths of 100 to 140 columns the history shows what matters,
// each commit's agent and absolute time, and the key list (?) leaves the
// history in sight. From 160 columns the history shares a left column with
// the tree and the content keeps at least half the screen: the agent shows,
// the absolute time when there is room (the commit's details show it).
func TestCommonWidths(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 80, 24)
	abs := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`)
	for _, size := range [][2]int{{100, 30}, {120, 30}, {120, 40}, {130, 40}, {140, 40}, {160, 50}} {
		d.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		rows := historyRows(d.frame())
		if len(rows) == 0 {
			t.Fatalf("at %dx%d no history row in sight:\n%s", size[0], size[1], d.frame())
		}
		for _, r := range rows {
			agentless := strings.Contains(r, " init ") // the vault's first commit has no agent
			if !agentless && !strings.Contains(r, "claude") || size[0] < wideLayout && !abs.MatchString(r) {
				t.Errorf("at %dx%d a history row lacks the agent or the absolute time: %q", size[0], size[1], r)
				break
			}
		}
		d.keys("?")
		if got := historyRows(d.frame()); strings.Join(got, "\n") != strings.Join(rows, "\n") {
			t.Errorf("at %dx%d the key list covers history rows:\n%s", size[0], size[1], d.frame())
		}
		d.keys("esc")
	}
}

// historyRows are the lines of frame that show a whole commit row: a hash
// stand-in, then its relative time.
func historyRows(frame string) []string {
	var out []string
	re := regexp.MustCompile(`[›● ] ?c0000\d\d \d+[smhd] `)
	for _, l := range strings.Split(frame, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// One long rename row on screen once made the history's columns come and go
// as it scrolled in and out of sight, and agents and tool-use ids were cut
// ("research-ag…", "toolu_create_00…") while the path column had room. The
// columns follow what is loaded, not what is in sight; a rare long path is
// cut instead, and an agent or id shows whole up to 20 and 24 cells.
func TestHistoryColumnsStayPut(t *testing.T) {
	v, _ := newVault(t)
	for i := range 20 {
		write(t, v, vault.Meta{Command: "create", Agent: "research-agent", ToolUseID: fmt.Sprintf("toolu_create_%04d", i)},
			fmt.Sprintf("/memories/notes/a%02d.md", i), "x\n")
	}
	const long = "/memories/projects/archive/2026/first-quarter/research-notes-on-the-long-thing.md"
	write(t, v, vault.Meta{Command: "create", Agent: "research-agent", ToolUseID: "toolu_create_long"}, long, "x\n")
	rename(t, v, long, "/memories/done/research-notes-on-the-long-thing.md")
	d := newDriver(t, v, 120, 24)
	d.keys("tab")
	// shape is where the agent column starts in the last history row, a
	// create's, and whether it shows the absolute time.
	shape := func() (int, bool) {
		rows := historyRows(d.frame())
		if len(rows) < 5 {
			t.Fatalf("too few history rows in sight:\n%s", d.frame())
		}
		r := rows[len(rows)-1]
		if !strings.Contains(r, "research-agent ") || !strings.Contains(r, "toolu_create_00") || strings.Contains(r, "…") {
			t.Errorf("a row cuts its agent or tool-use id: %q", r)
		}
		return strings.Index(r, "research-agent") - strings.Index(r, "c0000"), regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`).MatchString(r)
	}
	at, abs := shape()
	d.keys("pgdown", "pgdown")
	if at2, abs2 := shape(); at2 != at || abs2 != abs {
		t.Errorf("the columns changed as the long row left the screen: agent at %d, then %d; absolute time %v, then %v", at, at2, abs, abs2)
	}
}
