package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// onHead takes a new state of the vault. When the head moved it reloads what is
// open, fetches the new commits and refreshes a file shown at the head, keeping
// every cursor where it was.
func (m *Model) onHead(msg headMsg) tea.Cmd {
	var cmds []tea.Cmd
	if msg.poll && m.opts.PollInterval > 0 {
		every := m.opts.PollInterval
		if m.watched {
			every = max(every, watchedPoll)
		}
		cmds = append(cmds, pollCmd(every))
	}
	if msg.seq < m.headApplied {
		return tea.Batch(cmds...) // an older read overtaken by a newer one
	}
	m.headApplied = msg.seq
	m.headErr = msg.err
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("read the head: %v (any key tries again)", msg.err), true)
		if m.snap == nil {
			m.content.showHeadError(msg.err) // nothing else will replace "loading…"
		}
		return tea.Batch(cmds...)
	}
	if m.snap != nil && msg.snap.Commit() == m.snap.Commit() {
		return tea.Batch(cmds...)
	}
	first := m.snap == nil
	m.snap, m.tree.snap = msg.snap, msg.snap
	cmds = append(cmds, dirsCmd(m.ctx, m.snap, m.tree.openDirs()), m.hist.readCheckpoints(), m.sync.readStatus())
	if m.tree.filter != "" {
		m.tree.walkWant = m.snap.Commit()
		cmds = append(cmds, walkCmd(m.ctx, m.snap))
	}
	if first {
		cmds = append(cmds, m.hist.loadHistory(false))
	} else {
		cmds = append(cmds, m.hist.loadHistory(true))
		if m.content.want.show == showFile {
			cmds = append(cmds, m.follow(true))
		}
	}
	return tea.Batch(cmds...)
}

// onDirs routes listings to the tree; when the tree's selection went with
// them, or is a directory whose summary they change, the content follows.
func (m *Model) onDirs(msg dirsMsg) tea.Cmd {
	before := m.tree.selected()
	cmd := m.tree.Update(msg)
	if m.source == paneTree && (before == nil || m.tree.selected() != before || m.content.want.show == showNone || m.content.want.show == showDir) {
		return tea.Batch(cmd, m.follow(false))
	}
	return cmd
}

// onKey handles a key press in the current mode. A read that failed (the
// head, a listing, a page of history, the content) is tried again with it, so
// that a pane a passing failure emptied comes back at the next key.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	m.status, m.isErr = "", false
	retry := m.retryFailed()
	cmd := m.modeKey(msg)
	if m.content.failed && m.mode != modeEdit {
		cmd = tea.Batch(cmd, m.reloadContent())
	}
	return tea.Batch(retry, cmd)
}

// retryFailed reads again what failed to read: the head, the tree's
// listings, the history's next page.
func (m *Model) retryFailed() tea.Cmd {
	var cmds []tea.Cmd
	if m.headErr != nil {
		m.headErr = nil
		cmds = append(cmds, m.readHead(false))
	}
	if m.tree.err != nil && m.snap != nil {
		m.tree.err = nil
		cmds = append(cmds, dirsCmd(m.ctx, m.snap, m.tree.openDirs()))
	}
	if m.hist.err != nil && m.snap != nil {
		m.hist.err = nil
		if len(m.hist.recs) == 0 {
			cmds = append(cmds, m.hist.loadHistory(false))
		} else {
			cmds = append(cmds, m.hist.moreHistory())
		}
	}
	return tea.Batch(cmds...)
}

// reloadContent reads again the content whose read failed.
func (m *Model) reloadContent() tea.Cmd {
	req := m.content.want
	title, header := m.content.title, m.content.header
	var cmd tea.Cmd
	switch req.show {
	case showBlame:
		return m.startBlame()
	case showSearch:
		return m.search(req.path)
	case showFile:
		if m.snap == nil {
			return nil
		}
		req.rev = m.snap.Commit()
		fallthrough
	default:
		m.content.set(req, title, bodyLoading, header, []string{"loading…"})
		cmd = m.contentCmd(req)
	}
	return cmd
}

// editorQuit quits from the editor, but not over unsaved text at the first
// ctrl+c: it asks, and a second ctrl+c in a row quits.
func (m *Model) editorQuit() tea.Cmd {
	e := m.editor
	switch {
	case e.saving:
		m.setStatus("a save is under way: esc cancels it, then ctrl+c quits", true)
		return nil
	case e.dirty() && !e.quitAsked:
		e.quitAsked = true
		m.setStatus("unsaved changes: ctrl+c again quits and drops them, ctrl+s saves, esc leaves the editor", true)
		return nil
	}
	return tea.Quit
}

// modeKey handles a key press in the current mode.
func (m *Model) modeKey(msg tea.KeyPressMsg) tea.Cmd {
	switch m.mode {
	case modeDialog:
		return m.dialogKey(msg)
	case modePrompt:
		return m.promptKey(msg)
	case modeFilter:
		return m.filterKey(msg)
	case modeFind:
		return m.findKey(msg)
	case modeNew, modeMove:
		return m.pathKey(msg)
	case modeSearch, modePickaxe, modeJump:
		return m.askKey(msg)
	case modeHelp:
		if key.Matches(msg, m.keys.Quit) && msg.String() != "q" {
			return tea.Quit
		}
		if key.Matches(msg, m.keys.Cancel, m.keys.Help, m.keys.Quit) {
			m.mode = modeBrowse
			return nil
		}
		m.helpView.update(msg, max(m.height-3, 1))
		return nil
	case modeConflicts:
		return m.conflictsKey(msg)
	case modeReview:
		return m.reviewKey(msg)
	case modeEdit:
		switch {
		case msg.String() == "ctrl+c":
			return m.editorQuit()
		case m.editor.saving:
			if key.Matches(msg, m.keys.Cancel) {
				m.cancelWrite()
			}
			return nil
		case key.Matches(msg, m.keys.Save):
			m.editor.quitAsked = false
			cmd := m.save()
			if m.editor.closed {
				m.closeEditor()
			}
			return cmd
		}
		m.editor.quitAsked = false
		cmd := m.editor.Update(msg)
		if m.editor.closed {
			m.closeEditor()
		}
		return cmd
	}
	return m.browseKey(msg)
}

func (m *Model) browseKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.mode, m.helpView = modeHelp, helpView{}
	case key.Matches(msg, k.Review):
		return m.openReview()
	case key.Matches(msg, k.NextPane):
		m.focus = (m.focus + 1) % 3
		return m.focused()
	case key.Matches(msg, k.PrevPane):
		m.focus = (m.focus + 2) % 3
		return m.focused()
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		m.input.Prompt = "/"
		m.input.Placeholder = "words  agent:  session:  path:  tool:  cmd:  since:2d  until:"
		m.input.SetValue(m.hist.filter)
		m.input.CursorEnd()
		return m.input.Focus()
	case key.Matches(msg, k.Find):
		return m.startFind()
	case key.Matches(msg, k.Wrap):
		m.content.setWrap(m.content.nowrap)
	case key.Matches(msg, k.Words):
		m.content.setWords(!m.content.words)
	case key.Matches(msg, k.New):
		return m.startNew()
	case key.Matches(msg, k.Move):
		return m.startMove()
	case key.Matches(msg, k.Delete):
		return m.planDelete()
	case key.Matches(msg, k.NextMatch):
		m.content.nextMatch(1)
	case key.Matches(msg, k.PrevMatch):
		m.content.nextMatch(-1)
	case key.Matches(msg, k.Cancel):
		return m.cancel()
	case key.Matches(msg, k.Scope):
		m.scopeFile = !m.scopeFile
		return m.rescope()
	case key.Matches(msg, k.Mark):
		if r := m.hist.selected(); r != nil {
			m.hist.toggleMark(r.Commit)
			m.diffMarks = false
			switch len(m.hist.marks) {
			case 1:
				m.setStatus("1 marked: mark another with space, then v diffs the two", false)
			case 2:
				m.setStatus("2 marked: v shows the diff between them, esc clears the marks", false)
			}
			return m.follow(false)
		}
	case key.Matches(msg, k.AsOf):
		m.source = paneHistory
		switch len(m.hist.marks) {
		case 2:
			m.diffMarks, m.asOf = true, false
			m.focus = paneContent
		case 1:
			m.setStatus("1 marked: mark a second commit with space to diff the two", false)
			return nil
		default:
			m.asOf = !m.asOf
		}
		return m.follow(false)
	case key.Matches(msg, k.Restore, k.Revert, k.Rollback):
		return m.plan(msg)
	case key.Matches(msg, k.Checkpoint):
		return m.startPrompt()
	case key.Matches(msg, k.Blame):
		return m.startBlame()
	case key.Matches(msg, k.Search):
		return m.startAsk(modeSearch, "search: ", "")
	case key.Matches(msg, k.Pickaxe):
		return m.startAsk(modePickaxe, "history that adds or removes: ", m.hist.pickaxe)
	case key.Matches(msg, k.Jump):
		return m.startAsk(modeJump, "go to commit or checkpoint: ", "")
	case key.Matches(msg, k.Edit):
		return m.startEdit()
	case key.Matches(msg, k.Undo):
		return m.undoLast(false)
	case key.Matches(msg, k.Redo):
		return m.undoLast(true)
	case key.Matches(msg, k.Sync):
		return m.sync.start()
	case key.Matches(msg, k.Conflicts):
		return m.openConflicts()
	case key.Matches(msg, k.Open):
		return m.open()
	default:
		return m.route(msg)
	}
	return nil
}

// focused makes the newly focused list the one the content pane follows.
func (m *Model) focused() tea.Cmd {
	if m.focus == paneContent || m.focus == m.source {
		return nil
	}
	m.source = m.focus
	return m.follow(false)
}

// cancel backs out of the innermost thing: a running write, a running sync,
// the marks, then the filter.
func (m *Model) cancel() tea.Cmd {
	switch {
	case m.cancelWrite():
	case m.hist.cancelJump():
	case m.focus == paneContent && m.content.find.text != "":
		m.content.setFind("")
	case m.sync.cancelSync():
	case len(m.hist.marks) > 0:
		m.hist.marks, m.diffMarks = nil, false
		return m.follow(false)
	case m.tree.filter != "" || m.hist.filter != "":
		return m.applyFilter("")
	case m.hist.pickaxe != "":
		return m.setPickaxe("")
	case m.focus == paneContent:
		m.focus = m.source
	}
	return nil
}

// readHead reads the head; poll says the polling loop goes on after it.
func (m *Model) readHead(poll bool) tea.Cmd {
	m.headAsked++
	return headCmd(m.ctx, m.v, poll, m.headAsked)
}

// onCheckpoints routes the checkpoints to the history; the selected commit's
// details, when shown, name its checkpoints.
func (m *Model) onCheckpoints(msg checkpointsMsg) tea.Cmd {
	cmd := m.hist.Update(msg)
	if r := m.hist.selected(); r != nil && m.content.want.show == showCommit && m.content.want.rev == r.Commit {
		m.content.header, m.content.rows = m.hist.commitDetails(r), nil // with its checkpoints
	}
	return cmd
}
