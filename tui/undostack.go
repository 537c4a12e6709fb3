package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// Undo and redo of the interface's own actions: z undoes the last restore,
// revert, rollback or edit made here, ctrl+z redoes what z undid, as lazygit
// has them. Each is a revert of the commit the action made (or of the
// undo's), so it is a new commit and the history is never rewritten; a
// later change to the same lines makes the revert refuse, and nothing changes.

// undoEntry is an action that z can take back: the commit it made.
type undoEntry struct {
	commit string
	what   string // "edit of notes.md", for the status bar
}

// undoStack holds this session's actions (done) and what z took back
// (undone), each newest last.
type undoStack struct {
	done, undone []undoEntry
}

// did records a new action; it ends what could be redone, as in an editor.
func (s *undoStack) did(e undoEntry) {
	s.done = append(s.done, e)
	s.undone = nil
}

// top returns the newest entry of list, if any.
func top(list []undoEntry) (undoEntry, bool) {
	if len(list) == 0 {
		return undoEntry{}, false
	}
	return list[len(list)-1], true
}

// undoLast reverts the commit of the newest action made here.
func (m *Model) undoLast(redo bool) tea.Cmd {
	list, kind, word := m.undo.done, actUndo, "undo"
	if redo {
		list, kind, word = m.undo.undone, actRedo, "redo"
	}
	e, ok := top(list)
	if !ok {
		m.setStatus(fmt.Sprintf("nothing to %s: only what was done here (restore, revert, rollback, edit) can be", word), false)
		return nil
	}
	return m.actionCmd(action{kind: kind, rev: e.commit, what: e.what})
}

// onUndone moves the entry act took back or brought back to the other list,
// with the commit that did it. Made says whether a commit was made.
func (s *undoStack) onUndone(act action, commit string) {
	from, to := &s.done, &s.undone
	if act.kind == actRedo {
		from, to = &s.undone, &s.done
	}
	if e, ok := top(*from); !ok || e.commit != act.rev {
		return // the stacks changed meanwhile
	}
	*from = (*from)[:len(*from)-1]
	if commit != "" {
		*to = append(*to, undoEntry{commit: commit, what: act.what})
	}
}
