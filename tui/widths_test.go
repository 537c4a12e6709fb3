package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// At the common widths of 100 to 140 columns the history shows what matters,
// each commit's agent and absolute time, and the key list (?) leaves the
// history in sight.
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
			if !agentless && !strings.Contains(r, "claude") || !abs.MatchString(r) {
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
