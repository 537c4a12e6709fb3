package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// seedAgents adds to the seeded history two commits of another agent, in
// another session.
func seedAgents(t *testing.T, v *vault.Vault) {
	t.Helper()
	m := func(cmd, id string) vault.Meta {
		return vault.Meta{Command: cmd, ToolUseID: id, Agent: "support-bot", Session: "s-2"}
	}
	write(t, v, m("create", "toolu_10Sup"), "/memories/support/tickets.md", "- #41 refund\n")
	write(t, v, m("str_replace", "toolu_11Sup"), "/memories/support/tickets.md", "- #41 refund (done)\n")
}

// visible returns the commands and paths of the history's filtered view.
func visible(d *driver) []string {
	var out []string
	for _, i := range d.m.hist.view {
		r := d.m.hist.recs[i]
		out = append(out, r.Command+" "+strings.TrimPrefix(r.Path, "/memories/"))
	}
	return out
}

// The filter once matched inside commit hashes (/f2 listed a commit for its
// hash 65111f3f…) and could not narrow by agent, session, path or date; it
// reads fields now, and never looks at hashes.
func TestFilterFields(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	seedAgents(t, v)
	d := newDriver(t, v, 80, 24)
	// A hash prefix that no other text of the history holds.
	prefix := ""
	for _, r := range history(t, v) {
		p := r.Commit[:4]
		clash := false
		for _, o := range history(t, v) {
			for _, s := range []string{o.Subject, o.Path, o.NewPath, o.Command, o.Agent, o.ToolUseID, o.Session} {
				clash = clash || strings.Contains(strings.ToLower(s), p)
			}
		}
		if !clash {
			prefix = p
			break
		}
	}
	if prefix == "" {
		t.Skip("every commit's hash prefix occurs in some text of this history")
	}
	for _, tc := range []struct {
		q    string
		want string
	}{
		{prefix, ""},
		{"agent:support-bot", "str_replace support/tickets.md|create support/tickets.md"},
		{"session:s-1 cmd:create", "create scratch.md|create projects/memvault/todo.md|create projects/memvault/notes.md|create user/preferences.md"},
		{"agent:claude prefer", "str_replace user/preferences.md|create user/preferences.md"},
		{"path:support tool:toolu_11", "str_replace support/tickets.md"},
		{"since:2026-03-01T09:45:00Z", "str_replace support/tickets.md|create support/tickets.md"},
		{"until:2026-03-01T09:07:00Z", "init "},
		{"since:2h", ""},
		{"agent:support-bot agent:claude since:2026-03-01T09:40:00Z", "str_replace support/tickets.md|create support/tickets.md|delete scratch.md"},
	} {
		d.keys("/")
		for range 80 {
			d.keys("backspace")
		}
		d.typeText(tc.q)
		d.keys("enter")
		if got := strings.Join(visible(d), "|"); got != tc.want {
			t.Errorf("filter %q shows %q, want %q", tc.q, got, tc.want)
		}
	}
}

// The filtered view keeps the keys of the history: a commit's diff, the marks
// and the undo keys work on what the filter shows.
func TestFilteredViewKeepsKeys(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	seedAgents(t, v)
	for _, sz := range [][2]int{{160, 45}, {80, 24}, {40, 10}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newDriver(t, v, sz[0], sz[1])
			d.keys("/")
			d.typeText("agent:support-bot")
			d.golden(fmt.Sprintf("filter_agent_typing_%dx%d", sz[0], sz[1]))
			d.keys("enter", "tab", "j")
			d.golden(fmt.Sprintf("filter_agent_%dx%d", sz[0], sz[1]))
			r := d.m.hist.selected()
			if r == nil || r.Command != "create" || r.Agent != "support-bot" {
				t.Fatalf("the filtered history selects %+v, want support-bot's create", r)
			}
			if d.m.content.want.show != showCommit || d.m.content.want.rev != r.Commit {
				t.Errorf("the content shows %+v, want the selected commit's diff", d.m.content.want)
			}
			d.keys("t")
			if d.m.mode != modeDialog || !strings.Contains(d.m.dialog.title, "Revert commit") {
				t.Errorf("t in the filtered history: mode %v, want the revert's confirmation", d.m.mode)
			}
			d.keys("esc")
		})
	}
}
