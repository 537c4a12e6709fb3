package tui

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// component is a pane of the interface, as soft-serve's components are: it
// keeps its own state, handles the messages the root model routes to it (keys
// and clicks while it has the focus, the results of the reads it asked for),
// and draws itself in the room it is given. The root model does what spans
// panes: which pane has the focus, what the content pane follows, the
// dialogs and the bars.
type component interface {
	// SetSize gives the pane its room inside its border.
	SetSize(w, h int)
	// SetFocused tells the pane whether it has the focus, which it shows.
	SetFocused(focused bool)
	// Update handles a message the root model routed to the pane.
	Update(msg tea.Msg) tea.Cmd
	// Title is the pane's title, drawn in its top border.
	Title() string
	// View draws the pane's rows, each exactly as wide as its room.
	View() []string
}

var (
	_ component = (*treeModel)(nil)
	_ component = (*historyModel)(nil)
	_ component = (*contentModel)(nil)
	_ component = (*editor)(nil)
)

// common is what every component shares with the root model: the vault and
// the context its reads run under, the options, the keys, the styles, and
// the status bar's message.
type common struct {
	// ctx bounds the I/O of every command the model starts. Bubble Tea models
	// outlive any one call, so this is the one context kept in a struct; it
	// comes from New's caller and ends with the program.
	ctx  context.Context
	v    Vault
	opts Options
	keys KeyMap
	st   Styles

	status string
	isErr  bool // status is an error

	// undone names, by commit, the reverts this session made as undo (z)
	// or redo (ctrl+z): the vault records both as revert, and the history
	// says which they were.
	undone map[string]string
}

func (c *common) setStatus(s string, isErr bool) {
	c.status, c.isErr = s, isErr
}

// frame is a component's place: its size and whether it has the focus.
type frame struct {
	width, height int
	focused       bool
}

// SetSize implements component.
func (f *frame) SetSize(w, h int) { f.width, f.height = max(w, 0), max(h, 0) }

// SetFocused implements component.
func (f *frame) SetFocused(focused bool) { f.focused = focused }

// listRow lays out a row of a list: a cursor mark, left-aligned text and
// right-aligned text, styled as selected when it is.
func listRow(st *Styles, leftText, rightText string, w int, selected, focused bool) string {
	mark := " "
	if selected {
		mark = "›"
	}
	rw := lipgloss.Width(rightText)
	lw := w - 1 - rw
	if rw > 0 {
		lw--
	}
	s := mark + pad(leftText, max(lw, 0))
	if rw > 0 {
		s += " " + rightText
	}
	s = pad(s, w)
	switch {
	case selected && focused:
		return st.Cursor.Render(ansi.Strip(s))
	case selected:
		return st.CursorBlur.Render(ansi.Strip(s))
	}
	return s
}

// keepInView returns the offset nearest off that shows row cursor among n rows
// in a window of h.
func keepInView(off, cursor, h, n int) int {
	h = max(h, 1)
	if cursor < off {
		off = cursor
	}
	if cursor >= off+h {
		off = cursor - h + 1
	}
	return clamp(off, 0, max(n-h, 0))
}

type (
	// clickMsg is a click on row (counted from 0 below the top border) of the
	// pane it is routed to.
	clickMsg struct{ row int }
	// scrollMsg moves the cursor of the pane it is routed to by delta rows, or
	// scrolls the content, as the mouse wheel does.
	scrollMsg struct{ delta int }
)

// navDelta is how far a navigation key moves a cursor in a list of page rows
// in sight, and whether it is one.
func navDelta(k *KeyMap, msg tea.KeyPressMsg, page int) (int, bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	case key.Matches(msg, k.Top):
		return -1 << 30, true
	case key.Matches(msg, k.Bottom):
		return 1 << 30, true
	}
	return 0, false
}
