package tui

import (
	"context"
	"errors"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
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
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("read the head: %v", msg.err), true)
		return tea.Batch(cmds...)
	}
	if m.snap != nil && msg.snap.Commit() == m.snap.Commit() {
		return tea.Batch(cmds...)
	}
	first := m.snap == nil
	m.snap = msg.snap
	cmds = append(cmds, dirsCmd(m.ctx, m.snap, m.tree.openDirs()), m.readCheckpoints(), m.readStatus())
	if m.tree.filter != "" {
		m.tree.walkWant = m.snap.Commit()
		cmds = append(cmds, walkCmd(m.ctx, m.snap))
	}
	if first {
		cmds = append(cmds, m.loadHistory(false))
	} else {
		cmds = append(cmds, m.loadHistory(true))
		if m.content.want.show == showFile {
			cmds = append(cmds, m.follow(true))
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) onDirs(msg dirsMsg) tea.Cmd {
	if m.snap == nil || msg.commit != m.snap.Commit() {
		return nil
	}
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("list the tree: %v", msg.err), true)
		return nil
	}
	before := m.tree.selected()
	m.tree.setDirs(msg.dirs)
	if m.source == paneTree && (before == nil || m.tree.selected() != before || m.content.want.show == showNone || m.content.want.show == showDir) {
		return m.follow(false)
	}
	return nil
}

func (m *Model) onWalk(msg walkMsg) {
	if m.snap == nil || msg.commit != m.tree.walkWant {
		return
	}
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("list every file: %v", msg.err), true)
		return
	}
	m.tree.setAll(msg.commit, msg.files)
}

// loadHistory asks for the first page of the history's scope, or with fresh
// for the newest records to merge in.
func (m *Model) loadHistory(fresh bool) tea.Cmd {
	m.hist.loading = true
	req := logReq{scope: m.hist.scope, pickaxe: m.hist.pickaxe, limit: m.opts.PageSize, fresh: fresh}
	if fresh {
		return logCmd(m.ctx, m.v, req) // never cancelled: it brings new commits
	}
	return logCmd(m.pageContext(), m.v, req)
}

// moreHistory asks for the page after what is loaded when it will soon be needed.
func (m *Model) moreHistory() tea.Cmd {
	if !m.hist.needMore(m.lay.hist.h - 2) {
		return nil
	}
	m.hist.loading = true
	limit := m.opts.PageSize
	if m.hist.filter != "" {
		limit *= 5 // a filter passes few records; fetch more at once
	}
	return logCmd(m.pageContext(), m.v, logReq{scope: m.hist.scope, pickaxe: m.hist.pickaxe, skip: m.hist.base + len(m.hist.recs), limit: limit})
}

// earlierHistory asks for the page above a window that does not start at the
// newest commit, when the cursor nears its top.
func (m *Model) earlierHistory() tea.Cmd {
	h := &m.hist
	if h.base == 0 || h.loading || h.err != nil || h.cursor > m.lay.hist.h-2 {
		return nil
	}
	h.loading = true
	n := min(m.opts.PageSize, h.base)
	return logCmd(m.pageContext(), m.v, logReq{scope: h.scope, pickaxe: h.pickaxe, skip: h.base - n, limit: n, before: true})
}

// jumpHistory loads the window around a revision, or with rev "" the oldest
// records, and puts the cursor on that commit.
func (m *Model) jumpHistory(rev string) tea.Cmd {
	m.hist.loading = true
	req := logReq{scope: m.hist.scope, pickaxe: m.hist.pickaxe, limit: m.opts.PageSize, jump: rev, oldest: rev == ""}
	if rev == "" {
		m.setStatus("going to the first commit…", false)
	} else {
		m.setStatus("looking for "+sanitize(rev)+"…", false)
	}
	return jumpCmd(m.pageContext(), m.v, req)
}

// pageContext returns the context of a new history load, cancelling the one
// before it: a walk of a long history for a scope the user has left stops.
func (m *Model) pageContext() context.Context {
	if m.cancelLog != nil {
		m.cancelLog()
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelLog = cancel
	return ctx
}

func (m *Model) onLog(msg logMsg) tea.Cmd {
	req := msg.req
	if req.scope != m.hist.scope || req.pickaxe != m.hist.pickaxe ||
		!req.fresh && !req.before && req.jump == "" && !req.oldest && req.skip > m.hist.base+len(m.hist.recs) ||
		req.before && req.skip+req.limit != m.hist.base {
		return nil // a page of another scope, or of one since reset
	}
	m.hist.loading = false
	if errors.Is(msg.err, context.Canceled) {
		return nil
	}
	if msg.err != nil && (req.jump != "" || req.oldest) {
		m.setStatus(fmt.Sprintf("go to %s: %v", sanitize(req.jump), msg.err), true)
		return nil
	}
	if msg.err != nil {
		m.hist.err = msg.err
		m.setStatus(fmt.Sprintf("read the history: %v", msg.err), true)
		return nil
	}
	before := m.hist.selected()
	switch {
	case req.jump != "" || req.oldest:
		m.status = ""
		if !m.hist.setWindow(msg.recs, msg.base, msg.done, msg.at) && msg.at != "" {
			m.setStatus(fmt.Sprintf("%s is hidden by the filter", short(msg.at)), false)
		}
		m.source = paneHistory
	case req.before:
		m.hist.prependPage(msg.recs)
	case !msg.req.fresh:
		if req.skip == 0 && len(msg.recs) > 0 {
			m.hist.newest = msg.recs[0].Commit
		}
		m.hist.appendPage(msg.recs, msg.req.limit)
	case !m.hist.prepend(msg.recs):
		// More new commits than a page: start again from the newest.
		m.hist.reset(m.hist.scope)
		m.hist.appendPage(msg.recs, msg.req.limit)
	}
	if c := m.hist.selectNext; c != "" && m.hist.seen[c] {
		m.hist.selectNext, m.hist.cursor, m.source = "", m.hist.indexOf(c), paneHistory
	}
	var cmds []tea.Cmd
	if m.source == paneHistory && (before == nil || m.hist.selected() == nil || before.Commit != m.hist.selected().Commit) {
		cmds = append(cmds, m.follow(false))
	}
	return tea.Batch(append(cmds, m.moreHistory())...)
}

func (m *Model) onContent(msg contentMsg) {
	if msg.req != m.content.want {
		return // the user moved on
	}
	if msg.err != nil {
		m.showError(msg.req, msg.err)
		return
	}
	m.content.set(msg.req, msg.title, msg.kind, msg.header, msg.lines)
}

// showError puts an error in the content pane. A missing or wrong identity gets
// a panel that says what still works and how to fix it.
func (m *Model) showError(req contentReq, err error) {
	var lines []string
	switch {
	case errors.Is(err, vault.ErrNoIdentity):
		m.keyErr, m.keyReq = err, req
		lines = []string{
			"Cannot decrypt: no usable identity",
			"",
			"The identity file " + m.v.IdentityFile() + " is missing or unreadable,",
			"so memory contents and diffs cannot be shown.",
			"",
			"The tree, file sizes and history do not need it and still work.",
			"Name the right identity with --identity FILE or MEMVAULT_IDENTITY.",
		}
	case errors.Is(err, vault.ErrDecrypt) && req.show != showFile:
		m.keyErr, m.keyReq = err, req
		lines = []string{
			"Cannot decrypt: this commit is encrypted to other keys",
			"",
			"The identity file " + m.v.IdentityFile() + " cannot decrypt the files of " + short(req.rev) +
				": they were encrypted to the recipients of their time, such as before a key was added or changed.",
			"",
			"Files and commits encrypted to this identity still read as usual.",
		}
	case errors.Is(err, vault.ErrDecrypt):
		m.keyErr, m.keyReq = err, req
		lines = []string{
			"Cannot decrypt: wrong identity",
			"",
			"The identity file " + m.v.IdentityFile() + " cannot decrypt this memory:",
			"it was encrypted to other recipients.",
			"",
			"The tree, file sizes and history do not need it and still work.",
			"Name the right identity with --identity FILE or MEMVAULT_IDENTITY.",
		}
	default:
		lines = []string{"Cannot show this", "", sanitize(err.Error())}
	}
	title, header := req.path, []string(nil)
	if req.show == showCommit || req.show == showBetween {
		title, header = m.content.title, m.content.header // the details need no key
	}
	m.content.set(req, title, bodyError, header, lines)
}

// onKey handles a key press in the current mode.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	m.status, m.isErr = "", false
	switch m.mode {
	case modeDialog:
		return m.dialogKey(msg)
	case modePrompt:
		return m.promptKey(msg)
	case modeFilter:
		return m.filterKey(msg)
	case modeSearch, modePickaxe, modeJump:
		return m.askKey(msg)
	case modeEdit:
		if msg.String() == "ctrl+c" {
			return tea.Quit
		}
		return m.editKey(msg)
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
		return m.startSync()
	default:
		if m.focus == paneContent && m.content.isProvList() {
			if cmd, ok := m.provKey(msg); ok {
				return cmd
			}
		}
		return m.navKey(msg)
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

// cancel backs out of the innermost thing: a running sync, the marks, then
// the filter.
func (m *Model) cancel() tea.Cmd {
	switch {
	case m.cancelSync():
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

func (m *Model) setStatus(s string, isErr bool) {
	m.status, m.isErr = s, isErr
}

// readHead reads the head; poll says the polling loop goes on after it.
func (m *Model) readHead(poll bool) tea.Cmd {
	m.headAsked++
	return headCmd(m.ctx, m.v, poll, m.headAsked)
}

func (m *Model) readCheckpoints() tea.Cmd {
	m.cpAsked++
	return checkpointsCmd(m.ctx, m.v, m.cpAsked)
}

func (m *Model) onCheckpoints(msg checkpointsMsg) {
	if msg.seq < m.cpApplied {
		return
	}
	m.cpApplied = msg.seq
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("read the checkpoints: %v", msg.err), true)
		return
	}
	m.checkpoints = make(map[string][]string, len(msg.list))
	for _, c := range msg.list {
		m.checkpoints[c.Commit] = append(m.checkpoints[c.Commit], sanitize(c.Name))
	}
	if r := m.hist.selected(); r != nil && m.content.want.show == showCommit && m.content.want.rev == r.Commit {
		m.content.header, m.content.rows = m.commitDetails(r), nil // with its checkpoints
	}
}
