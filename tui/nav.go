package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// navKey moves within the focused pane.
func (m *Model) navKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	page := 0
	switch m.focus {
	case paneTree:
		page = m.lay.tree.h - 2
	case paneHistory:
		page = m.lay.hist.h - 2
	default:
		page = m.lay.content.h - 2
	}
	switch {
	case key.Matches(msg, k.Up):
		return m.move(-1)
	case key.Matches(msg, k.Down):
		return m.move(1)
	case key.Matches(msg, k.PageUp):
		return m.move(-page)
	case key.Matches(msg, k.PageDown):
		return m.move(page)
	case key.Matches(msg, k.Top):
		if m.focus == paneHistory && m.hist.base > 0 {
			// The newest commits are not loaded: start again from them.
			m.hist.reset(m.hist.scope)
			m.source = paneHistory
			return m.loadHistory(false)
		}
		return m.move(-1 << 30)
	case key.Matches(msg, k.Bottom):
		if m.focus == paneHistory && !m.hist.done {
			return m.jumpHistory("")
		}
		return m.move(1 << 30)
	case key.Matches(msg, k.Open):
		return m.open()
	case key.Matches(msg, k.Fold):
		return m.fold(false)
	case key.Matches(msg, k.Unfold):
		return m.fold(true)
	}
	return nil
}

// move moves the focused pane's cursor, or scrolls the content, by delta.
func (m *Model) move(delta int) tea.Cmd {
	switch m.focus {
	case paneTree:
		before := m.tree.cursor
		m.tree.move(delta)
		if m.tree.cursor == before {
			return nil
		}
		m.source = paneTree
		return tea.Batch(m.follow(false), m.treeScope())
	case paneHistory:
		before := m.hist.cursor
		m.hist.move(delta)
		if m.hist.cursor != before {
			m.diffMarks = false // the content follows the cursor again
		}
		if m.hist.cursor == before {
			return tea.Batch(m.moreHistory(), m.earlierHistory())
		}
		m.source = paneHistory
		return tea.Batch(m.follow(false), m.moreHistory(), m.earlierHistory())
	}
	m.content.scroll(delta, m.lay.content.h-2)
	return nil
}

// open acts on the selected row: a directory folds or unfolds, a file or a
// commit moves the focus to the content.
func (m *Model) open() tea.Cmd {
	switch m.focus {
	case paneTree:
		if n := m.tree.selected(); n != nil && n.dir {
			return m.fold(!n.open)
		}
		m.source, m.focus = paneTree, paneContent
	case paneHistory:
		m.source, m.focus = paneHistory, paneContent
	}
	return m.follow(false)
}

// fold closes (or opens) the selected directory; folding a file or a closed
// directory moves to its parent.
func (m *Model) fold(open bool) tea.Cmd {
	if m.focus != paneTree {
		return nil
	}
	n := m.tree.selected()
	if n == nil {
		return nil
	}
	if !n.dir || (!open && !n.open) {
		if !open {
			for i := m.tree.cursor - 1; i >= 0; i-- {
				if m.tree.rows[i].depth < n.depth {
					m.tree.cursor = i
					return tea.Batch(m.follow(false), m.treeScope())
				}
			}
		}
		return nil
	}
	if n.open == open {
		return nil
	}
	n.open = open
	m.tree.flatten()
	if open && !n.listed && m.snap != nil {
		return dirsCmd(m.ctx, m.snap, []string{n.path})
	}
	return nil
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
	return m.loadHistory(false)
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
	return tea.Batch(append(cmds, m.moreHistory())...)
}

// onClick focuses the pane under the pointer and selects the row clicked.
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
			return m.move(m.tree.offset + row - m.tree.cursor)
		}
	case paneHistory:
		if row >= 0 && m.hist.offset+row < len(m.hist.view) {
			return m.move(m.hist.offset + row - m.hist.cursor)
		}
	}
	return m.focused()
}

// onWheel scrolls the pane under the pointer.
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
	cmd := m.move(delta)
	m.focus = focus
	return cmd
}
