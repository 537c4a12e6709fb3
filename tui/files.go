package tui

// Files made, moved and deleted from the tree, as lazygit's panels make and
// delete branches: n asks for the name of a new file and opens it in the
// editor (ctrl+s creates it), M asks where the selected file or directory
// goes, and d deletes it after a confirmation. Each is one commit, like the
// memory tool's create, rename and delete, and z takes it back.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// treeTarget is the tree's selected path, when the tree has the focus and it
// is not /memories itself.
func (m *Model) treeTarget(what string) (*node, bool) {
	n := m.tree.selected()
	switch {
	case m.focus != paneTree || n == nil:
		m.setStatus(what+": select a file or a directory in the tree", true)
		return nil, false
	case n.path == vault.Root:
		m.setStatus(what+": not /memories itself", true)
		return nil, false
	case m.snap == nil:
		return nil, false
	}
	if _, ok := m.v.(editVault); !ok {
		m.setStatus(what+": this vault cannot be written here", true)
		return nil, false
	}
	return n, true
}

// startNew asks for the path of a new file, in the selected directory (or
// the selected file's).
func (m *Model) startNew() tea.Cmd {
	if _, ok := m.v.(editVault); !ok || m.snap == nil {
		m.setStatus("new file: this vault cannot be written here", true)
		return nil
	}
	dir := vault.Root
	if n := m.tree.selected(); n != nil && n.dir {
		dir = n.path
	} else if n != nil {
		dir = path.Dir(n.path)
	}
	m.mode = modeNew
	m.input.Prompt = "new file: "
	m.input.Placeholder = ""
	m.input.SetValue(dir + "/")
	m.input.CursorEnd()
	return m.input.Focus()
}

// startMove asks where the selected file or directory goes.
func (m *Model) startMove() tea.Cmd {
	n, ok := m.treeTarget("move")
	if !ok {
		return nil
	}
	m.mode = modeMove
	m.movePath = n.path
	m.input.Prompt = "move " + sanitize(strings.TrimPrefix(n.path, vault.Root+"/")) + " to: "
	m.input.Placeholder = ""
	m.input.SetValue(n.path)
	m.input.CursorEnd()
	return m.input.Focus()
}

// pathKey edits the path of a new file or of a move; enter goes on, esc
// leaves it.
func (m *Model) pathKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Cancel):
		m.mode = modeBrowse
		m.input.Blur()
		return nil
	case !key.Matches(msg, m.keys.Submit):
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	md := m.mode
	m.mode = modeBrowse
	m.input.Blur()
	p, err := vault.CleanPath(strings.TrimSpace(m.input.Value()))
	if err == nil && p == vault.Root {
		err = errors.New("not /memories itself")
	}
	if err != nil {
		m.setStatus(fmt.Sprintf("%s: %v", map[mode]string{modeNew: "new file", modeMove: "move"}[md], err), true)
		return nil
	}
	if md == modeMove {
		if p == m.movePath {
			m.setStatus("move: the same place: nothing to do", false)
			return nil
		}
		return m.actionCmd(action{kind: actMove, path: m.movePath, to: p})
	}
	if k, err := m.snap.Stat(p); err == nil && k != vault.KindNone {
		m.setStatus(fmt.Sprintf("new file: %s exists already", sanitize(p)), true)
		return nil
	}
	// The file comes into being when the editor saves it.
	m.editor = &editor{common: &m.common, path: p, at: m.snap.Commit(), create: true,
		ta: newTextArea("", m.st.LineNumber, m.st.Cursor)}
	m.mode, m.focus = modeEdit, paneContent
	m.editor.SetSize(m.lay.content.w-2, m.lay.content.h-2)
	m.setStatus("new file "+sanitize(p)+": ctrl+s creates it, esc leaves with nothing written", false)
	return nil
}

// planDelete asks to confirm the delete of the selected file or directory,
// saying how much goes.
func (m *Model) planDelete() tea.Cmd {
	n, ok := m.treeTarget("delete")
	if !ok {
		return nil
	}
	snap, ctx, p := m.snap, m.ctx, n.path
	act := action{kind: actDelete, path: p}
	return func() tea.Msg {
		msg := planMsg{act: act, title: "Delete " + sanitize(p)}
		k, err := snap.Stat(p)
		switch {
		case err != nil:
			msg.err = fmt.Errorf("delete: %w", err)
		case k == vault.KindDir:
			files := 0
			if fs, ok := walkCmd(ctx, snap)().(walkMsg); ok {
				for _, f := range fs.files {
					if strings.HasPrefix(f.path, p+"/") {
						files++
					}
				}
			}
			msg.lines = []string{fmt.Sprintf("Delete the directory %s and the %s in it.", sanitize(p), plural(files, "file")),
				"", "This is a new commit: its files stay in the history, and z brings them back."}
		default:
			msg.lines = []string{fmt.Sprintf("Delete %s (%s).", sanitize(p), humanSize(n.size)),
				"", "This is a new commit: the file stays in the history, and z brings it back."}
		}
		return msg
	}
}

// changeRun deletes or moves a file or directory as one commit, as the memory
// tool's delete and rename do, and names that commit for z.
func changeRun(v Vault, meta vault.Meta, act action) writeRun {
	ev := v.(editVault)
	return func(ctx context.Context, locked func()) tea.Msg {
		what := map[actionKind]string{actDelete: "delete ", actMove: "move "}[act.kind] + act.path
		if act.kind == actMove {
			what += " to " + act.to
		}
		meta.Command = map[actionKind]string{actDelete: "delete", actMove: "rename"}[act.kind]
		c, err := ev.UpdateCommit(ctx, meta, func(tx *vault.Tx) error {
			locked()
			if act.kind == actDelete {
				return tx.Remove(act.path)
			}
			return tx.Rename(act.path, act.to)
		})
		switch {
		case errors.Is(err, context.Canceled):
			return actionMsg{act: act, done: what + ": cancelled, nothing changed"}
		case errors.Is(err, vault.ErrExist):
			return actionMsg{act: act, done: what, err: fmt.Errorf("%s exists already", act.to)}
		case err != nil:
			return actionMsg{act: act, done: what, err: err}
		}
		return actionMsg{act: act, done: fmt.Sprintf("%s: done as commit %s", what, short(c)), commit: c}
	}
}
