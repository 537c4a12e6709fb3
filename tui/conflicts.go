package tui

// The files a sync's merge left for a person to settle, as a list over the
// panes: C opens it, j/k choose, enter opens the chosen file in the editor
// (where alt+n and alt+p go from one conflict marker to the next) and esc
// closes it. The list is the vault's status (see syncstate.go), read beside
// the interface whenever the head moves, so a file settled and saved leaves
// it on its own.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/memvault/memvault/vault"
)

// conflictList is the open list: the cursor and the first row shown.
type conflictList struct {
	cursor, offset int
}

// conflict is a file left in conflict, and how.
type conflict struct {
	path string // a memory path
	kind string // "markers" or "moved-aside", as vault.Status says
}

// conflicts are the files in conflict as last read, in the status's order.
func (s *syncState) conflicts() []conflict {
	if s.state == nil {
		return nil
	}
	out := make([]conflict, 0, len(s.state.Conflicts))
	for _, c := range s.state.Conflicts {
		out = append(out, conflict{path: c.Path, kind: c.Kind})
	}
	return out
}

// openConflicts opens the list, or says why there is none.
func (m *Model) openConflicts() tea.Cmd {
	switch {
	case m.sync.state == nil && m.sync.err != nil:
		m.setStatus(fmt.Sprintf("conflicts: %v", m.sync.err), true)
	case m.sync.state == nil:
		m.setStatus("conflicts: the vault's status is still being read", false)
	case len(m.sync.state.Conflicts) > 0:
		m.mode, m.conflictList = modeConflicts, conflictList{}
	case m.sync.state.ConflictsUnknown != "":
		m.setStatus("conflicts unknown: "+sanitize(m.sync.state.ConflictsUnknown), true)
	default:
		m.setStatus("no file is in conflict", false)
	}
	return nil
}

// conflictsKey moves in the list, opens the chosen file in the editor, or
// closes the list.
func (m *Model) conflictsKey(msg tea.KeyPressMsg) tea.Cmd {
	list := m.sync.conflicts()
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit) && msg.String() != "q":
		return tea.Quit
	case key.Matches(msg, k.Cancel, k.Conflicts, k.Quit):
		m.mode = modeBrowse
		return nil
	case key.Matches(msg, k.Open):
		if len(list) == 0 {
			m.mode = modeBrowse
			return nil
		}
		c := list[clamp(m.conflictList.cursor, 0, len(list)-1)]
		m.mode = modeBrowse
		return m.editPath(c.path, c.kind == "markers") // a file moved aside holds no marker
	case key.Matches(msg, k.TakeOurs, k.TakeTheirs):
		if len(list) == 0 {
			return nil
		}
		c := list[clamp(m.conflictList.cursor, 0, len(list)-1)]
		if c.kind != "markers" {
			m.setStatus("moved aside, it holds no conflict markers: in the tree M moves it over the other, d deletes it", true)
			return nil
		}
		m.mode = modeBrowse
		return m.takeSide(c.path, key.Matches(msg, k.TakeOurs))
	}
	nav := DefaultKeyMap() // the panes' moves are off while the list is open
	if d, ok := navDelta(&nav, msg, m.conflictRows()); ok {
		m.conflictList.cursor = clamp(m.conflictList.cursor+d, 0, max(len(list)-1, 0))
	}
	return nil
}

// conflictRows is how many files the list shows at once on this screen.
func (m *Model) conflictRows() int { return max(m.height-4, 1) }

// conflictsBox frames the list, no larger than the screen: each file with how
// it is in conflict, the chosen one marked; a list taller than the screen
// scrolls with the cursor and its title says which part shows.
func (m *Model) conflictsBox() []string {
	list := m.sync.conflicts()
	cl := &m.conflictList
	cl.cursor = clamp(cl.cursor, 0, max(len(list)-1, 0))
	rows := min(m.conflictRows(), len(list))
	cl.offset = keepInView(cl.offset, cl.cursor, rows, len(list))
	kinds := map[string]string{"markers": "both sides kept", "moved-aside": "moved aside"} // vault.Status's kinds
	pw, kw := 0, 0
	for _, c := range list {
		pw = max(pw, lipgloss.Width(relPath(c.path)))
		kw = max(kw, lipgloss.Width(kinds[c.kind]))
	}
	title := "Conflicts · enter edits · o ours · t theirs"
	if rows < len(list) {
		title = fmt.Sprintf("Conflicts %d-%d/%d · enter edits · o ours · t theirs", cl.offset+1, cl.offset+rows, len(list))
	}
	// As wide as the widest row, or the title, and the screen allows; a path
	// is cut only when the screen is narrower than it.
	w := min(max(1+pw+2+kw, lipgloss.Width(title)+2)+2, m.width-2)
	body := make([]string, 0, rows)
	for i := cl.offset; i < cl.offset+rows; i++ {
		c := list[i]
		right := m.st.Faint.Render(kinds[c.kind])
		if lipgloss.Width(relPath(c.path))+1+2+kw > w-2 {
			right = "" // the path first
		}
		body = append(body, listRow(&m.st, relPath(c.path), right, w-2, i == cl.cursor, true))
	}
	return box(rect{w: w, h: len(body) + 2}, title, body, true, &m.st)
}

// relPath is a memory path as the panes show it, under /memories.
func relPath(p string) string {
	return strings.TrimPrefix(sanitize(p), vault.Root+"/")
}

// takeSide settles every conflict of file p as one side had it, ours or
// theirs, as one commit that z takes back.
func (m *Model) takeSide(p string, ours bool) tea.Cmd {
	ev, ok := m.v.(editVault)
	if !ok {
		m.setStatus("this vault cannot be written here", true)
		return nil
	}
	side := map[bool]string{true: "ours", false: "theirs"}[ours]
	act := action{kind: actResolve, path: p, what: "taking " + side + " in " + relPath(p)}
	meta := vault.Meta{Command: "resolve", Agent: m.opts.Agent}
	return m.startWrite("take "+side+" in "+relPath(p), func(ctx context.Context, locked func()) tea.Msg {
		what := "take " + side + " in " + p
		n := 0
		c, err := ev.UpdateCommit(ctx, meta, func(tx *vault.Tx) error {
			locked()
			text, err := tx.ReadFile(ctx, p)
			if err != nil {
				return err
			}
			var settled string
			settled, n = settle(string(text), ours)
			if n == 0 {
				return nil
			}
			return tx.WriteFile(ctx, p, []byte(settled))
		})
		switch {
		case errors.Is(err, context.Canceled):
			return actionMsg{act: act, done: what + ": cancelled, nothing changed"}
		case err != nil:
			return actionMsg{act: act, done: what, err: err}
		case n == 0:
			return actionMsg{act: act, done: what + ": no conflict marker left, nothing changed"}
		}
		return actionMsg{act: act, done: fmt.Sprintf("%s: %s settled, as commit %s", what, plural(n, "conflict"), short(c)), commit: c}
	})
}

// settle keeps, of each conflict a merge left in text between its markers,
// the lines of one side, ours or theirs, and drops the markers; it says how
// many conflicts it settled.
func settle(text string, ours bool) (string, int) {
	var b strings.Builder
	n, part := 0, 0 // 0 outside, 1 ours, 2 theirs
	lines := strings.SplitAfter(text, "\n")
	for _, l := range lines {
		bare := strings.TrimRight(l, "\r\n")
		switch {
		case part == 0 && strings.HasPrefix(bare, "<<<<<<< "):
			part = 1
		case part == 1 && bare == "=======":
			part = 2
		case part == 2 && strings.HasPrefix(bare, ">>>>>>> "):
			part = 0
			n++
		case part == 0, part == 1 && ours, part == 2 && !ours:
			b.WriteString(l)
		}
	}
	if part != 0 { // a conflict not closed: leave the text as it is
		return text, 0
	}
	return b.String(), n
}
