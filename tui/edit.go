package tui

// Edit in place: e opens the selected memory file in a text area over its
// plaintext, held in memory only (nothing decrypted is written to a disk);
// ctrl+s saves it as one commit, esc leaves with nothing written. A save
// is refused when the file changed underneath since it was opened, so a
// person never silently overwrites what an agent wrote meanwhile.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// editVault is what an edit in place needs; *vault.Vault has it. A Vault
// without it cannot be edited from the interface. UpdateCommit names the
// commit the write made, so the UI can show it and take it back.
type editVault interface {
	UpdateCommit(ctx context.Context, meta vault.Meta, fn func(tx *vault.Tx) error) (string, error)
}

var _ editVault = (*vault.Vault)(nil)

// errChanged says the file an edit was made on changed underneath it.
var errChanged = errors.New("changed since it was opened")

type (
	// editOpenMsg holds the plaintext of the file an edit was asked for.
	editOpenMsg struct {
		path     string
		at       string // the commit it was read at
		text     []byte
		err      error
		conflict bool // open at the first conflict marker
	}
	// editSavedMsg is the outcome of saving an edit: the new commit, "" when
	// the text was what the file held.
	editSavedMsg struct {
		path   string
		commit string
		err    error
	}
)

// editor is an edit in progress: the file's plaintext as opened (base) and the
// text area holding the person's version.
type editor struct {
	*common
	frame
	closed  bool // the person left the editor, saved or not
	create  bool // a new file, which the save creates
	path    string
	at      string
	base    []byte
	ta      *textArea
	saving  bool
	discard bool // esc was pressed once on unsaved changes
	// quitAsked: ctrl+c was pressed once on unsaved changes, which the next
	// ctrl+c drops
	quitAsked bool
	// isDirty is dirty's answer for the text's version dirtyAt.
	isDirty bool
	dirtyAt int
}

// dirty tells whether the text differs from the file as opened; it is
// worked out again only after a change.
func (e *editor) dirty() bool {
	if e.ta.version != e.dirtyAt {
		e.dirtyAt, e.isDirty = e.ta.version, e.ta.Value() != string(e.base)
	}
	return e.isDirty
}

// startEdit reads the selected file at the head, for the editor.
func (m *Model) startEdit() tea.Cmd {
	p := m.selectedRecordFile() // the tree's file, else the one the selected commit changed
	if p == "" {
		m.noFile("edit")
		return nil
	}
	return m.editPath(p, false)
}

// editPath reads file p at the head, for the editor; with conflict, the
// editor opens at its first conflict marker.
func (m *Model) editPath(p string, conflict bool) tea.Cmd {
	if _, ok := m.v.(editVault); !ok || m.snap == nil {
		m.setStatus("edit: this vault cannot be edited here", true)
		return nil
	}
	snap, ctx := m.snap, m.ctx
	m.setStatus("opening "+sanitize(p)+"…", false)
	return func() tea.Msg {
		b, err := snap.ReadFile(ctx, p)
		return editOpenMsg{path: p, at: snap.Commit(), text: b, err: err, conflict: conflict}
	}
}

// editable tells why text cannot go through the text area unchanged, or "":
// the area turns tabs into spaces and drops control characters, and a line
// the interface would have to escape must not reach the terminal raw.
func editable(text []byte) string {
	for _, l := range strings.Split(string(text), "\n") {
		if sanitize(l) != l {
			return "it holds tabs, control characters, joined emoji or invalid UTF-8 that the editor would change"
		}
	}
	return ""
}

func (m *Model) onEditOpen(msg editOpenMsg) tea.Cmd {
	if m.mode != modeBrowse {
		return nil
	}
	m.status = ""
	switch {
	case errors.Is(msg.err, vault.ErrNotExist):
		m.setStatus("edit: "+sanitize(msg.path)+" is no longer there", true)
		return nil
	case msg.err != nil:
		m.setStatus(fmt.Sprintf("edit %s: %v", sanitize(msg.path), msg.err), true)
		return nil
	}
	if why := editable(msg.text); why != "" {
		m.setStatus(fmt.Sprintf("edit %s: %s; use memvault edit", sanitize(msg.path), why), true)
		return nil
	}
	m.editor = &editor{common: &m.common, path: msg.path, at: msg.at, base: msg.text,
		ta: newTextArea(string(msg.text), m.st.LineNumber, m.st.Cursor)}
	m.mode, m.focus = modeEdit, paneContent
	m.editor.SetSize(m.lay.content.w-2, m.lay.content.h-2)
	if msg.conflict && !strings.HasPrefix(m.editor.ta.Value(), "<<<<<<< ") {
		m.editor.jumpConflict(1)
	}
	return nil
}

// SetSize implements component: the text area fills the room.
func (e *editor) SetSize(w, h int) {
	e.frame.SetSize(w, h)
	e.ta.SetSize(w, h)
}

// Update implements component: save, leave, the conflict markers, or the
// text itself.
func (e *editor) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		e.ta.Update(msg) // a paste
		return nil
	}
	if e.saving {
		return nil
	}
	k := &e.keys
	switch {
	case key.Matches(kp, k.Cancel):
		if e.dirty() && !e.discard {
			e.discard = true
			e.setStatus("unsaved changes: esc again discards them, ctrl+s saves", true)
			return nil
		}
		e.closed = true
		e.setStatus("edit cancelled: nothing written", false)
		return nil
	case key.Matches(kp, k.NextConflict):
		e.jumpConflict(1)
		return nil
	case key.Matches(kp, k.PrevConflict):
		e.jumpConflict(-1)
		return nil
	}
	e.discard = false
	e.ta.Update(msg)
	return nil
}

// jumpConflict moves the cursor to the next (dir 1) or previous (-1) line
// that opens a conflict a merge left, as "<<<<<<< ours (host, time)".
func (e *editor) jumpConflict(dir int) {
	ta := e.ta
	for i := ta.Line() + dir; i >= 0 && i < len(ta.lines); i += dir {
		if strings.HasPrefix(string(ta.lines[i]), "<<<<<<< ") {
			ta.goToLine(i)
			e.setStatus(fmt.Sprintf("conflict at line %d", i+1), false)
			return
		}
	}
	e.setStatus("no further conflict marker", false)
}

func (m *Model) closeEditor() {
	m.editor = nil
	m.mode, m.focus = modeBrowse, m.source
}

// save writes the text as the file's content in one commit, as the running
// write; with nothing changed it leaves the editor.
func (m *Model) save() tea.Cmd {
	e := m.editor
	e.discard = false
	if !e.dirty() && !e.create {
		e.closed = true
		e.setStatus("no change: nothing written", false)
		return nil
	}
	cmd := m.startWrite("save "+sanitize(e.path), e.saveRun([]byte(e.ta.Value())))
	e.saving = cmd != nil
	return cmd
}

// saveRun writes edited as the file's content in one commit, if the file
// still holds what was opened.
func (e *editor) saveRun(edited []byte) writeRun {
	ev := e.v.(editVault)
	p, base, create := e.path, e.base, e.create
	meta := vault.Meta{Command: "edit", Agent: e.opts.Agent}
	if create {
		meta.Command = "create"
	}
	return func(ctx context.Context, locked func()) tea.Msg {
		c, err := ev.UpdateCommit(ctx, meta, func(tx *vault.Tx) error {
			locked()
			cur, err := tx.ReadFile(ctx, p)
			switch {
			case create && err == nil, create && errors.Is(err, vault.ErrIsDir):
				return fmt.Errorf("%s was made meanwhile: %w", p, errChanged)
			case create && errors.Is(err, vault.ErrNotExist):
				return tx.WriteFile(ctx, p, edited)
			case errors.Is(err, vault.ErrNotExist):
				return fmt.Errorf("%s was deleted: %w", p, errChanged)
			case err != nil:
				return err
			case !bytes.Equal(cur, base):
				return fmt.Errorf("%s %w", p, errChanged)
			case bytes.Equal(cur, edited):
				return nil
			}
			return tx.WriteFile(ctx, p, edited)
		})
		clear(edited)
		if err != nil {
			return editSavedMsg{path: p, err: err}
		}
		return editSavedMsg{path: p, commit: c}
	}
}

func (m *Model) onEditSaved(msg editSavedMsg) tea.Cmd {
	e := m.editor
	if e == nil || e.path != msg.path {
		return nil
	}
	e.saving = false
	switch {
	case errors.Is(msg.err, context.Canceled):
		m.setStatus("save cancelled: nothing written; the text is still here", false)
		return nil
	case errors.Is(msg.err, errChanged) && e.create:
		m.setStatus(fmt.Sprintf("not saved: %s was made meanwhile; nothing written (esc leaves, then e opens it)",
			sanitize(strings.TrimPrefix(msg.path, vault.Root+"/"))), true)
		return nil
	case errors.Is(msg.err, errChanged):
		m.setStatus(fmt.Sprintf("not saved: %s changed since you opened it; nothing written (esc leaves, then e opens it afresh)",
			sanitize(strings.TrimPrefix(msg.path, vault.Root+"/"))), true)
		return nil
	case msg.err != nil:
		m.setStatus(fmt.Sprintf("save %s: %v", sanitize(msg.path), msg.err), true)
		return nil
	}
	m.closeEditor()
	if msg.commit == "" {
		m.setStatus("no change: nothing written", false)
		return m.follow(true)
	}
	what := "edit of "
	if e.create {
		what = "creation of "
	}
	m.undo.did(undoEntry{commit: msg.commit, what: what + strings.TrimPrefix(msg.path, vault.Root+"/")})
	m.setStatus(fmt.Sprintf("saved %s as commit %s · z undoes", sanitize(msg.path), short(msg.commit)), false)
	m.hist.selectNext = msg.commit
	return m.readHead(false)
}

// Title implements component: the file being edited, and whether it has
// unsaved changes.
func (e *editor) Title() string {
	t := "edit " + sanitize(strings.TrimPrefix(e.path, vault.Root+"/"))
	if e.create {
		return "new " + sanitize(strings.TrimPrefix(e.path, vault.Root+"/")) + " · not yet written"
	}
	if e.dirty() {
		t += " · modified"
	}
	return t
}

// View implements component: the text area, as rows exactly as wide as the
// room.
func (e *editor) View() []string {
	w, h := e.width, e.height
	rows := e.ta.View()
	out := make([]string, 0, h)
	for i := 0; i < h; i++ {
		line := ""
		if i < len(rows) {
			line = rows[i]
		}
		out = append(out, pad(line, w))
	}
	return out
}
