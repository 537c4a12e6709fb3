package tui

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/memvault/memvault/vault"
)

// View implements tea.Model: the whole screen, in the alternate screen with
// the mouse on.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "memvault"
	return v
}

// render draws the frame as lines joined by newlines, exactly width by height.
func (m *Model) render() string {
	l := m.lay
	var content component = &m.content
	if m.mode == modeEdit && m.editor != nil {
		content = m.editor
	}
	draw := func(r rect, c component, p pane) []string {
		return box(r, c.Title(), c.View(), m.focus == p, &m.st)
	}
	var frame []string
	if m.mode == modeReview {
		frame = m.reviewFrame()
	} else {
		frame = compose(l.statusY, map[rect][]string{
			l.tree:    draw(l.tree, &m.tree, paneTree),
			l.hist:    draw(l.hist, &m.hist, paneHistory),
			l.content: draw(l.content, content, paneContent),
		})
	}
	frame = append(frame, m.statusBar(), m.helpBar())
	if m.snap == nil && m.headErr != nil && m.mode == modeBrowse {
		// Nothing could be read: the reason takes the screen, where it is
		// read whole, not cut to the content pane.
		overlay(frame, m.width, m.frameLines(headErrorLines(m.headErr, m.v.IdentityFile()), "memvault"))
	}
	switch m.mode {
	case modeDialog:
		overlay(frame, m.width, m.dialogBox())
	case modeConflicts:
		overlay(frame, m.width, m.conflictsBox())
	case modeHelp:
		// Above the history when it fits there, clear of the border under the
		// tree, so the commits stay in sight while the keys are read.
		help := m.fullHelpBox()
		if len(help) < l.hist.y {
			overlayAt(frame, m.width, help, l.hist.y-1-len(help))
		} else {
			overlay(frame, m.width, help)
		}
	}
	return strings.Join(frame, "\n")
}

// statusBar is one line: a message, or where the user is.
func (m *Model) statusBar() string {
	w := m.width
	if m.mode.typing() {
		return pad(m.input.View(), w)
	}
	if m.status != "" {
		st := m.st.StatusInfo
		if m.isErr {
			st = m.st.StatusError
		}
		return pad(" "+st.Render(sanitize(m.status)), w)
	}
	left := " memvault"
	if m.snap != nil {
		left += " · main @ " + short(m.snap.Commit())
	}
	// No identity at all holds for everything; a wrong one only for what it
	// failed on, which may be a commit from before a change of keys.
	switch {
	case errors.Is(m.content.keyErr, vault.ErrNoIdentity):
		left += " · " + m.st.StatusError.Render("no usable identity")
	case m.content.keyErr == nil || m.content.want != m.content.keyReq:
	case m.content.keyReq.show == showFile:
		left += " · " + m.st.StatusError.Render("wrong identity")
	default:
		left += " · " + m.st.StatusError.Render(short(m.content.keyReq.rev)+" encrypted to other keys")
	}
	if sum := m.sync.View(); sum != "" {
		left += " · " + sum
	}
	pos, n := m.hist.position()
	right := fmt.Sprintf("commit %d/%s ", pos, n)
	if len(m.hist.marks) > 0 {
		right = fmt.Sprintf("%d marked · ", len(m.hist.marks)) + right
	}
	gap := max(w-lipgloss.Width(left)-lipgloss.Width(right), 1)
	return pad(m.st.Status.Render(left+strings.Repeat(" ", gap)+right), w)
}

// helpBar is the short help for where the focus is: as many of its keys as
// fit, always ending with how to get the full help and how to quit.
func (m *Model) helpBar() string {
	st := m.st.Help
	item := func(b key.Binding) string {
		return st.ShortKey.Render(b.Help().Key) + " " + st.ShortDesc.Render(b.Help().Desc)
	}
	sep := st.ShortSeparator.Render(" • ")
	tail := item(m.keys.Help) + sep + item(m.keys.Quit)
	if m.mode == modeEdit { // every other key types
		tail = st.ShortKey.Render("ctrl+c") + " " + st.ShortDesc.Render("quit")
	}
	room := m.width - 2 - lipgloss.Width(tail)
	var b strings.Builder
	conflicts := len(m.sync.conflicts()) > 0 || m.mode == modeConflicts
	for _, k := range m.keys.ShortHelp() {
		if !k.Enabled() || !conflicts && k.Help().Key == m.keys.Conflicts.Help().Key {
			continue // C only once there is something to list
		}
		s := item(k) + sep
		if lipgloss.Width(s) > room {
			break
		}
		room -= lipgloss.Width(s)
		b.WriteString(s)
	}
	return pad(" "+b.String()+tail, m.width)
}

// dialogBox frames the confirmation.
func (m *Model) dialogBox() []string {
	d := m.dialog
	lines := append([]string{m.st.DialogTitle.Render(d.title), ""}, d.lines...)
	lines = append(lines, "", m.st.Faint.Render("enter/y: do it   esc/n: cancel"))
	return m.frameLines(lines, "Confirm")
}

// frameLines boxes lines for an overlay no wider than the screen.
func (m *Model) frameLines(lines []string, title string) []string {
	w := 0
	for _, l := range lines {
		w = max(w, lipgloss.Width(l))
	}
	w = min(w+4, m.width-2)
	var body []string
	for _, l := range lines {
		for _, piece := range wrapLine(l, w-4) {
			body = append(body, " "+pad(piece, w-4)+" ")
		}
	}
	return box(rect{w: w, h: len(body) + 2}, title, body, true, &m.st)
}
