package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// actionKind is an undo the user can ask for, or a checkpoint.
type actionKind int

const (
	actRestore    actionKind = iota // the selected file back to a commit
	actRevert                       // undo one commit
	actRollback                     // the whole vault back to a commit
	actCheckpoint                   // name a commit
	actUndo                         // take back an action made here: revert its commit
	actRedo                         // bring back what an undo took back: revert the undo
	actDelete                       // delete a file or a directory
	actMove                         // move (rename) a file or a directory
	actResolve                      // settle a file's conflicts as one side had them
)

// action is one change to the vault, as confirmed by the user.
type action struct {
	kind actionKind
	path string // actRestore
	from string // actRestore: the file's name at rev, where it was renamed since
	to   string // actMove: where it goes
	rev  string
	name string // actCheckpoint
	what string // actUndo, actRedo: the action, in words
}

type (
	// planMsg says exactly what an action will do, for its confirmation.
	planMsg struct {
		act   action
		title string
		lines []string
		err   error
	}
	// actionMsg is the outcome of an action.
	actionMsg struct {
		act    action
		done   string // what happened, or what failed, for the status bar
		commit string // the new commit, if one was made
		err    error
	}
)

// describe names an action that z can undo, for the status bar.
func (a action) describe() string {
	switch a.kind {
	case actRestore:
		return "restore of " + strings.TrimPrefix(a.path, vault.Root+"/")
	case actRevert:
		return "revert of " + short(a.rev)
	case actRollback:
		return "rollback to " + short(a.rev)
	case actDelete:
		return "delete of " + strings.TrimPrefix(a.path, vault.Root+"/")
	case actMove:
		return "move of " + strings.TrimPrefix(a.path, vault.Root+"/")
	}
	return a.what
}

// dialog is a confirmation on top of the panes.
type dialog struct {
	title string
	lines []string
	act   action
}

// plan works out what the undo key k asks for and what it would do.
func (m *Model) plan(msg tea.KeyPressMsg) tea.Cmd {
	r := m.hist.selected()
	if r == nil {
		return nil
	}
	act := action{rev: r.Commit}
	switch {
	case key.Matches(msg, m.keys.Restore):
		act.kind, act.path = actRestore, m.selectedRecordFile()
		act.from = m.fileThen(act.path)
	case key.Matches(msg, m.keys.Revert):
		act.kind = actRevert
	default:
		act.kind = actRollback
	}
	return m.planCmd(act)
}

func (m *Model) onPlan(msg planMsg) {
	if m.mode != modeBrowse {
		return
	}
	if msg.act.kind == actDelete {
		if n := m.tree.selected(); n == nil || n.path != msg.act.path {
			return // the user moved on while it was worked out
		}
	} else if r := m.hist.selected(); r == nil || r.Commit != msg.act.rev {
		return
	}
	if msg.err != nil {
		m.setStatus(msg.err.Error(), true)
		return
	}
	if msg.lines == nil { // nothing would change
		m.setStatus(msg.title, false)
		return
	}
	m.dialog = &dialog{title: msg.title, lines: msg.lines, act: msg.act}
	m.mode = modeDialog
}

func (m *Model) dialogKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Confirm):
		act := m.dialog.act
		m.dialog, m.mode = nil, modeBrowse
		return m.actionCmd(act)
	case key.Matches(msg, m.keys.Cancel), msg.String() == "n", msg.String() == "q":
		m.dialog, m.mode = nil, modeBrowse
		m.setStatus("cancelled: nothing changed", false)
	}
	return nil
}

// onAction reports an action's outcome and, when it committed, reads the new
// head at once so the commit shows in the history.
func (m *Model) onAction(msg actionMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus(fmt.Sprintf("%s: %v", msg.done, msg.err), true)
		return nil
	}
	m.setStatus(msg.done, false)
	switch msg.act.kind {
	case actUndo, actRedo:
		m.undo.onUndone(msg.act, msg.commit)
		if msg.commit != "" {
			if m.undone == nil {
				m.undone = map[string]string{}
			}
			m.undone[msg.commit] = map[actionKind]string{actUndo: "undo", actRedo: "redo"}[msg.act.kind]
		}
	case actRestore, actRevert, actRollback, actDelete, actMove, actResolve:
		if msg.commit != "" {
			m.undo.did(undoEntry{commit: msg.commit, what: msg.act.describe()})
			m.status += " · z undoes"
		}
	}
	m.hist.selectNext = msg.commit
	return tea.Batch(m.readHead(false), m.hist.readCheckpoints())
}

// startPrompt asks for the name of a checkpoint at the selected commit, or at
// the head.
func (m *Model) startPrompt() tea.Cmd {
	rev := m.checkpointRev()
	if rev == "" {
		return nil
	}
	m.mode = modePrompt
	m.input.Prompt = fmt.Sprintf("name a checkpoint at %s: ", short(rev))
	m.input.Placeholder = ""
	m.input.SetValue("")
	return m.input.Focus()
}

// checkpointRev is the commit a new checkpoint names: the selected one when the
// history has the focus, else the head.
func (m *Model) checkpointRev() string {
	if r := m.hist.selected(); r != nil && m.source == paneHistory {
		return r.Commit
	}
	if m.snap != nil {
		return m.snap.Commit()
	}
	return ""
}

func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Submit):
		name := m.input.Value()
		m.mode = modeBrowse
		m.input.Blur()
		if name == "" {
			return nil
		}
		return m.actionCmd(action{kind: actCheckpoint, name: name, rev: m.checkpointRev()})
	case key.Matches(msg, m.keys.Cancel):
		m.mode = modeBrowse
		m.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}
