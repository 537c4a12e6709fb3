package tui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// pane is one of the three panes the focus moves between.
type pane int

const (
	paneTree pane = iota
	paneHistory
	paneContent
)

// Model is the root model of the interface. It owns one sub-model per pane and
// routes messages to them; use New to make one.
type Model struct {
	common
	help help.Model
	dark bool

	width, height int
	lay           layout
	focus         pane
	source        pane // the list the content pane follows: tree or history
	mode          mode

	snap      *vault.Snapshot // the head the tree shows; nil until loaded
	scopeFile bool            // history follows the tree's selection
	asOf      bool            // a selected commit shows the file as it was, not the diff
	diffMarks bool            // the content shows the diff between the two marked commits

	// The panes, each a component the model routes messages to.
	tree    treeModel
	hist    historyModel
	content contentModel
	editor  *editor // the edit in place, in modeEdit

	input        textinput.Model // the filter, or a checkpoint's name
	movePath     string          // what a move (modeMove) moves
	dialog       *dialog
	conflictList conflictList // the files in conflict, in modeConflicts
	review       reviewModel  // the changes that wait for a person, in modeReview
	helpView     helpView
	undo         undoStack // this session's actions, for z and ctrl+z
	sync         syncState // the remotes' state, and a sync started here

	// Reads of the head run concurrently; each is numbered, and a result
	// older than one already applied is dropped.
	headAsked, headApplied int
	headErr                error     // the last read of the head failed
	write                  *writeJob // the change being written, if any
	writeSeq               int
	watched                bool // the vault tells of commits at once; polling is the fallback
}

// New returns the root model for v. Its commands do their I/O under ctx.
func New(ctx context.Context, v Vault, opts Options) *Model {
	opts.fill()
	m := &Model{
		common: common{ctx: ctx, v: v, opts: opts, keys: DefaultKeyMap()},
		help:   help.New(),
		dark:   !opts.Light,
	}
	m.tree = newTree(&m.common)
	m.hist.common = &m.common
	m.content.common = &m.common
	m.sync.common = &m.common
	m.input = textinput.New()
	m.input.Prompt = "/"
	m.setStyles()
	m.width, m.height = 80, 24
	m.lay = computeLayout(m.width, m.height, 0)
	m.sizePanes()
	m.content.set(contentReq{}, "", bodyLoading, nil, []string{"loading…"})
	m.keys.enable(m.mode, m.focus, false, false, false)
	return m
}

func (m *Model) setStyles() {
	m.st = NewStyles(m.dark, m.opts.NoColor)
	m.help.Styles = m.st.Help
	is := textinput.DefaultStyles(m.dark)
	if m.opts.NoColor {
		is = textinput.Styles{}
	}
	is.Cursor.Blink = false // a steady cursor needs no timer
	m.input.SetStyles(is)
	if m.editor != nil {
		m.editor.ta.numStyle, m.editor.ta.cursorStyle = m.st.LineNumber, m.st.Cursor
	}
}

// Init implements tea.Model: it loads the head and asks the terminal for its
// background colour.
func (m *Model) Init() tea.Cmd {
	var watch tea.Cmd
	if m.opts.PollInterval > 0 {
		watch = watchCmd(m.ctx, m.v)
	}
	var tick tea.Cmd
	if m.opts.PollInterval > 0 {
		tick = statusTick()
	}
	return tea.Batch(m.readHead(m.opts.PollInterval > 0), watch, tick, tea.RequestBackgroundColor)
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
		m.setStyles()
	case tea.KeyPressMsg:
		cmd = m.onKey(msg)
	case tea.MouseClickMsg:
		cmd = m.onClick(msg.Mouse())
	case tea.MouseWheelMsg:
		cmd = m.onWheel(msg.Mouse())
	case pollMsg:
		cmd = m.readHead(true)
	case watchingMsg:
		m.watched = true
		cmd = nextChangeCmd(msg.ch)
	case changedMsg:
		cmd = tea.Batch(m.readHead(false), nextChangeCmd(msg.ch))
	case watchEndedMsg:
		m.watched = false
	case headMsg:
		cmd = m.onHead(msg)
	case dirsMsg:
		cmd = m.onDirs(msg)
	case walkMsg:
		cmd = m.tree.Update(msg)
	case logMsg:
		cmd = m.routeHistory(msg)
	case contentMsg:
		cmd = m.onContent(msg)
	case provMsg:
		cmd = m.content.Update(msg)
	case checkpointsMsg:
		cmd = m.onCheckpoints(msg)
	case planMsg:
		m.onPlan(msg)
	case actionMsg:
		cmd = m.onAction(msg)
	case jumpMsg:
		cmd = m.onJump(msg)
	case writeWaitMsg, writeLockedMsg, writeDoneMsg:
		cmd = m.onWrite(msg)
	case syncStatusMsg, statusTickMsg, statusDueMsg, syncTickMsg:
		cmd = m.sync.Update(msg)
	case syncDoneMsg:
		cmd = tea.Batch(m.sync.Update(msg), m.readHead(false))
	case editOpenMsg:
		cmd = m.onEditOpen(msg)
	case editSavedMsg:
		cmd = m.onEditSaved(msg)
	case reviewListMsg:
		cmd = m.review.Update(msg)
	case reviewDoneMsg:
		cmd = m.onReviewDone(msg)
	default:
		if m.mode == modeEdit && m.editor != nil {
			cmd = m.editor.Update(msg)
		} else if m.mode.typing() {
			m.input, cmd = m.input.Update(msg)
		}
	}
	m.settle()
	return m, cmd
}

// settle brings what depends on the state up to date after any message: the
// keys that apply, the panes' sizes and focus, and scroll offsets that keep
// each cursor in view.
func (m *Model) settle() {
	sel := m.tree.selected()
	file := (sel != nil && !sel.dir) || m.selectedRecordFile() != ""
	commit := m.hist.selected() != nil && (m.focus == paneHistory || m.focus == paneContent && m.source == paneHistory)
	m.keys.enable(m.mode, m.focus, commit, file, m.content.find.text != "")
	m.keys.Confirm.SetEnabled(m.mode == modeDialog || m.mode == modeReview && m.review.confirm != "")
	if m.tree.conflictsOf != m.sync.state {
		m.tree.setConflicts(m.sync.state, m.sync.conflicts())
	}
	m.lay = computeLayout(m.width, m.height, m.hist.histWant())
	m.help.SetWidth(m.width)
	m.sizePanes()
	m.tree.offset = keepInView(m.tree.offset, m.tree.cursor, m.tree.height, len(m.tree.rows))
	m.hist.offset = keepInView(m.hist.offset, m.hist.cursor, m.hist.height, len(m.hist.view))
	m.content.wrap(m.content.width)
	m.content.scroll(0, m.content.height)
}

// sizePanes gives each pane its room inside its border, and the focus.
func (m *Model) sizePanes() {
	m.tree.SetSize(m.lay.tree.w-2, m.lay.tree.h-2)
	m.hist.SetSize(m.lay.hist.w-2, m.lay.hist.h-2)
	m.content.SetSize(m.lay.content.w-2, m.lay.content.h-2)
	m.tree.SetFocused(m.focus == paneTree)
	m.hist.SetFocused(m.focus == paneHistory)
	m.content.SetFocused(m.focus == paneContent)
	if m.editor != nil {
		m.editor.SetSize(m.lay.content.w-2, m.lay.content.h-2)
		m.editor.SetFocused(m.focus == paneContent)
	}
}

// selectedRecordFile is the file an edit, a blame, a restore or "as it was"
// acts on, taken from the list the content follows: in the tree its selected
// file (none for a directory: never a file shown before); in the history the
// tree's selected file, else the path the selected commit changed.
func (m *Model) selectedRecordFile() string {
	n := m.tree.selected()
	if n != nil && !n.dir {
		return n.path
	}
	if m.source == paneTree {
		return ""
	}
	if r := m.hist.selected(); r != nil && r.Path != "" && r.Command != "rename" && r.Command != "rollback" && r.Command != "revert" {
		return r.Path
	}
	return ""
}

// fileThen is the name file p had at the selected commit: in the history of
// p itself, which follows p back through its renames, the name it had
// before a rename above that commit; otherwise p.
func (m *Model) fileThen(p string) string {
	h := &m.hist
	if p == "" || h.scope != p || h.base > 0 || h.selected() == nil {
		return p
	}
	name := p
	for j := range h.view[h.cursor] { // every record above it, filtered or not
		r := &h.recs[j]
		if r.Command != "rename" || r.NewPath == "" {
			continue
		}
		switch {
		case name == r.NewPath:
			name = r.Path
		case strings.HasPrefix(name, r.NewPath+"/"): // a directory above it moved
			name = r.Path + strings.TrimPrefix(name, r.NewPath)
		}
	}
	return name
}

// noFile says why there is no file to act on, for the status bar.
func (m *Model) noFile(what string) {
	if n := m.tree.selected(); n != nil && n.dir && m.source == paneTree {
		m.setStatus(fmt.Sprintf("%s: %s is a directory; select a file", what, sanitize(strings.TrimPrefix(n.path, vault.Root+"/"))), true)
		return
	}
	m.setStatus(what+": select a file in the tree first", true)
}
