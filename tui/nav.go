package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// route hands a key to the pane with the focus, and makes the content follow
// a selection that moved.
func (m *Model) route(msg tea.Msg) tea.Cmd {
	switch m.focus {
	case paneTree:
		return m.routeTree(msg)
	case paneHistory:
		return m.routeHistory(msg)
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && m.content.isProvList() && k.String() == "enter" {
		return m.openProv()
	}
	return m.content.Update(msg)
}

// routeTree hands msg to the tree. When its selection moved, the tree becomes
// what the content follows, and a file-scoped history follows it too.
func (m *Model) routeTree(msg tea.Msg) tea.Cmd {
	before := m.tree.selected()
	cmd := m.tree.Update(msg)
	if m.tree.selected() == before {
		return cmd
	}
	m.source = paneTree
	return tea.Batch(cmd, m.follow(false), m.treeScope())
}

// routeHistory hands msg to the history. When its selection moved, or it
// took the content's attention (a jump, a page from the newest, an action's
// commit), the history becomes what the content follows.
func (m *Model) routeHistory(msg tea.Msg) tea.Cmd {
	before := m.hist.selected()
	cmd := m.hist.Update(msg)
	after := m.hist.selected()
	took := m.hist.took
	m.hist.took = false
	if _, page := msg.(logMsg); page {
		// A page leaves the selection where it was unless it took the
		// content; the content shows what is selected once it is loaded.
		if took {
			m.source = paneHistory
		}
		if m.source == paneTree && m.content.want.show == showDir {
			return tea.Batch(cmd, m.follow(false)) // an empty vault's summary says how old it is
		}
		if m.source == paneHistory && (before == nil || after == nil || before.Commit != after.Commit) {
			return tea.Batch(cmd, m.follow(false))
		}
		return cmd
	}
	switch {
	case took:
		m.source = paneHistory // the newest page is on its way
	case after != nil && (before == nil || before.Commit != after.Commit):
		m.diffMarks = false // the content follows the cursor again
		m.source = paneHistory
		return tea.Batch(cmd, m.follow(false))
	}
	return cmd
}

// open acts on the selected row: a directory folds or unfolds, a file or a
// commit moves the focus to the content.
func (m *Model) open() tea.Cmd {
	switch m.focus {
	case paneTree:
		if n := m.tree.selected(); n != nil && n.dir {
			return m.tree.fold(!n.open)
		}
		m.source, m.focus = paneTree, paneContent
	case paneHistory:
		m.source, m.focus = paneHistory, paneContent
	}
	return m.follow(false)
}

// follow points the content pane at what the list it follows has selected. With
// refresh a file at the head is read again even if it is already shown.
func (m *Model) follow(refresh bool) tea.Cmd {
	req, title, header := m.wantContent()
	switch {
	case req.show == showNone || req.show == showDir:
		// Made without I/O, and it may have changed with the listing.
		if req != m.content.want || !slices.Equal(header, m.content.lines) {
			m.content.set(req, title, bodyInfo, nil, header)
		}
		return nil
	case req == m.content.want && !refresh:
		return nil
	}
	if m.content.want != req {
		m.content.set(req, title, bodyLoading, header, []string{"loading…"})
	}
	return m.contentCmd(req)
}

// treeScope makes a file-scoped history follow the tree's selection.
func (m *Model) treeScope() tea.Cmd {
	if !m.scopeFile {
		return nil
	}
	return m.rescope()
}

// rescope points the history at the whole vault or at the tree's selection.
func (m *Model) rescope() tea.Cmd {
	scope := ""
	if n := m.tree.selected(); m.scopeFile && n != nil && n != m.tree.root && n.path != m.tree.root.path {
		scope = n.path
	}
	if scope == m.hist.scope && m.hist.recs != nil {
		return nil
	}
	m.hist.reset(scope)
	if m.snap == nil {
		return nil
	}
	return m.hist.loadHistory(false)
}

// filterKey edits the filter, applying it as it is typed.
func (m *Model) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Submit):
		m.mode = modeBrowse
		m.input.Blur()
		return nil
	case key.Matches(msg, m.keys.Cancel):
		m.mode = modeBrowse
		m.input.Blur()
		return m.applyFilter("")
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if q := m.input.Value(); q != m.hist.filter {
		return tea.Batch(cmd, m.applyFilter(q))
	}
	return cmd
}

// applyFilter filters the history by q (see histFilter), and the tree by the
// names q's words and paths ask for.
func (m *Model) applyFilter(q string) tea.Cmd {
	var cmds []tea.Cmd
	m.hist.setFilter(q, m.opts.Now())
	if bad := m.hist.flt.bad; len(bad) > 0 {
		m.setStatus("filter: cannot read "+strings.Join(bad, " ")+" (a date is 2d, 3h, 1w, today or 2026-03-01)", true)
	}
	if m.snap != nil && m.tree.setFilter(m.hist.flt.treeText(), m.snap.Commit()) && m.tree.walkWant != m.snap.Commit() {
		m.tree.walkWant = m.snap.Commit()
		cmds = append(cmds, walkCmd(m.ctx, m.snap))
	}
	m.tree.offset = 0
	if m.source == paneTree {
		cmds = append(cmds, m.follow(false), m.treeScope())
	} else {
		cmds = append(cmds, m.follow(false))
	}
	return tea.Batch(append(cmds, m.hist.moreHistory())...)
}

// onClick focuses the pane under the pointer and routes the click to it: a
// click on the tree's selected row opens it.
func (m *Model) onClick(ms tea.Mouse) tea.Cmd {
	if m.mode != modeBrowse || ms.Button != tea.MouseLeft {
		return nil
	}
	p, row, ok := m.lay.hit(ms.X, ms.Y)
	if !ok {
		return nil
	}
	m.focus = p
	switch p {
	case paneTree:
		if row >= 0 && m.tree.offset+row < len(m.tree.rows) {
			if m.tree.offset+row == m.tree.cursor {
				return m.open()
			}
			return m.routeTree(clickMsg{row: row})
		}
	case paneHistory:
		if row >= 0 && m.hist.offset+row < len(m.hist.view) {
			return m.routeHistory(clickMsg{row: row})
		}
	}
	return m.focused()
}

// onWheel scrolls the pane under the pointer, wherever the focus is.
func (m *Model) onWheel(ms tea.Mouse) tea.Cmd {
	if m.mode != modeBrowse {
		return nil
	}
	p, _, ok := m.lay.hit(ms.X, ms.Y)
	if !ok {
		return nil
	}
	delta := 3
	if ms.Button == tea.MouseWheelUp {
		delta = -3
	} else if ms.Button != tea.MouseWheelDown {
		return nil
	}
	focus := m.focus
	m.focus = p
	cmd := m.route(scrollMsg{delta: delta})
	m.focus = focus
	return cmd
}
