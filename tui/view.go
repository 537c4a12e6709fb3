package tui

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

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
	var frame []string
	treeBox := box(l.tree, m.treeTitle(), m.treeRows(l.tree.w-2, l.tree.h-2), m.focus == paneTree, &m.st)
	histBox := box(l.hist, m.histTitle(), m.histRows(l.hist.w-2, l.hist.h-2), m.focus == paneHistory, &m.st)
	title := sanitize(m.content.title)
	if title == "" {
		title = "memvault"
	}
	body := m.content.render(l.content.w-2, l.content.h-2, &m.st)
	if m.mode == modeEdit && m.editor != nil {
		title, body = m.editorTitle(), m.editorRows(l.content.w-2, l.content.h-2)
	}
	contentBox := box(l.content, title, body, m.focus == paneContent, &m.st)
	frame = compose(l.statusY, map[rect][]string{l.tree: treeBox, l.hist: histBox, l.content: contentBox})
	frame = append(frame, m.statusBar(), m.helpBar())
	switch m.mode {
	case modeDialog:
		overlay(frame, m.width, m.dialogBox())
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

func (m *Model) treeTitle() string {
	t := "Memory"
	if m.tree.filter != "" {
		t += " · /" + sanitize(m.tree.filter)
	}
	return t
}

// treeRows draws the visible rows of the tree.
func (m *Model) treeRows(w, h int) []string {
	out := make([]string, 0, h)
	for i := m.tree.offset; i < len(m.tree.rows) && len(out) < h; i++ {
		n := m.tree.rows[i]
		var b strings.Builder
		b.WriteString(strings.Repeat("  ", n.depth))
		name := sanitize(n.name)
		switch {
		case n.dir && n.open:
			b.WriteString("▾ " + m.highlight(name, m.st.Dir))
		case n.dir:
			b.WriteString("▸ " + m.highlight(name, m.st.Dir) + m.st.Dir.Render("/"))
		default:
			b.WriteString("  " + m.highlight(name, m.st.File))
		}
		size := ""
		switch {
		case n.bad:
			size = "unreadable"
		case !n.dir:
			size = humanSize(n.size)
		}
		out = append(out, m.row(b.String(), m.st.Size.Render(size), w, i == m.tree.cursor, m.focus == paneTree))
	}
	if len(m.tree.rows) == 0 {
		out = append(out, pad(m.st.Faint.Render("nothing matches"), w))
	}
	return out
}

// highlight draws name in st, and the part the tree filter matched in Match.
func (m *Model) highlight(name string, st lipgloss.Style) string {
	lname, q := strings.ToLower(name), strings.ToLower(m.tree.filter)
	i := strings.Index(lname, q)
	if q == "" || i < 0 || len(lname) != len(name) { // offsets in lname must hold in name
		return st.Render(name)
	}
	j := i + len(q)
	return st.Render(name[:i]) + m.st.Match.Render(name[i:j]) + st.Render(name[j:])
}

// row lays out a list row: a cursor mark, left-aligned text and right-aligned
// text, styled as selected when it is.
func (m *Model) row(leftText, rightText string, w int, selected, focused bool) string {
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
		return m.st.Cursor.Render(ansi.Strip(s))
	case selected:
		return m.st.CursorBlur.Render(ansi.Strip(s))
	}
	return s
}

func (m *Model) histTitle() string {
	t := "History · all"
	if m.hist.scope != "" {
		t = "History · " + sanitize(strings.TrimPrefix(m.hist.scope, vault.Root+"/"))
	}
	if m.hist.filter != "" {
		t += " · /" + sanitize(m.hist.filter)
	}
	if m.hist.pickaxe != "" {
		t += " · -S " + sanitize(m.hist.pickaxe)
	}
	return t
}

// The widths of a history row's parts: the cursor mark, the mark and hash,
// the relative time, the absolute time and the command, each with its space.
const (
	histFixed = 1 + 9 + 8 + 12
	histAbs   = 17
)

// histColumns chooses the columns of history rows w cells wide whose paths
// (checkpoints included) need pathW. The agent keeps its place while the path
// still gets minPath cells; then the path takes what it needs, and only when
// it is whole do the tool-use id and then the absolute time show (the commit's
// details show both in any case).
func histColumns(w, pathW, aw, tw int) (abs, agent, tool bool) {
	const minPath = 30
	need := histFixed + min(pathW, minPath)
	if aw > 0 && need+1+aw <= w {
		agent, need = true, need+1+aw
	}
	need += pathW - min(pathW, minPath)
	if need > w {
		return false, agent, false
	}
	if tw > 0 && need+1+tw <= w {
		tool, need = true, need+1+tw
	}
	return need+histAbs <= w, agent, tool
}

// histPath is a record's path as the history shows it, with its checkpoints.
func (m *Model) histPath(r *vault.Record) string {
	p := strings.TrimPrefix(sanitize(r.Path), vault.Root+"/")
	if r.NewPath != "" {
		p += " → " + strings.TrimPrefix(sanitize(r.NewPath), vault.Root+"/")
	}
	for _, name := range m.checkpoints[r.Commit] {
		p = "⚑" + name + " " + p
	}
	return p
}

// histWant is the width the history pane needs to show every column and the
// whole path of its widest loaded row, border included.
func (m *Model) histWant() int {
	h := &m.hist
	if h.wantN == len(h.view) && h.wantFirst == h.firstCommit() && h.wantCp == len(m.checkpoints) {
		return h.want
	}
	pw, aw, tw := 0, 0, 0
	for _, i := range h.view {
		r := &h.recs[i]
		pw = max(pw, lipgloss.Width(m.histPath(r)))
		aw = max(aw, min(lipgloss.Width(sanitize(r.Agent)), 12))
		tw = max(tw, min(lipgloss.Width(sanitize(r.ToolUseID)), 16))
	}
	h.want = 2 + histFixed + histAbs + pw + 1 + aw + 1 + tw
	h.wantN, h.wantFirst, h.wantCp = len(h.view), h.firstCommit(), len(m.checkpoints)
	return h.want
}

// histRows draws the visible commits, with as many columns as fit.
func (m *Model) histRows(w, h int) []string {
	now := m.opts.Now()
	out := make([]string, 0, h)
	aw, tw := m.rightWidths(h)
	pw := 0
	for i := m.hist.offset; i < len(m.hist.view) && i < m.hist.offset+h; i++ {
		pw = max(pw, lipgloss.Width(m.histPath(&m.hist.recs[m.hist.view[i]])))
	}
	wide, wider, widest := histColumns(w, pw, aw, tw)
	for i := m.hist.offset; i < len(m.hist.view) && len(out) < h; i++ {
		r := &m.hist.recs[m.hist.view[i]]
		var b strings.Builder
		mark := " "
		if m.hist.marked(r.Commit) {
			mark = m.st.Marked.Render("●")
		}
		b.WriteString(mark + m.st.Hash.Render(short(r.Commit)) + " ")
		b.WriteString(m.st.Time.Render(fmt.Sprintf("%-7s", relTime(r.Time, now))) + " ")
		if wide {
			b.WriteString(m.st.Time.Render(absTime(r.Time, now)) + " ")
		}
		b.WriteString(m.st.Command.Render(fmt.Sprintf("%-11s", sanitize(r.Command))) + " ")
		p := strings.TrimPrefix(sanitize(r.Path), vault.Root+"/")
		if r.NewPath != "" {
			p += " → " + strings.TrimPrefix(sanitize(r.NewPath), vault.Root+"/")
		}
		var right []string
		if wider {
			right = append(right, m.st.Agent.Render(pad(sanitize(r.Agent), aw)))
		}
		if widest {
			right = append(right, m.st.ToolUse.Render(pad(sanitize(r.ToolUseID), tw)))
		}
		for _, name := range m.checkpoints[r.Commit] {
			b.WriteString(m.st.Checkpoint.Render("⚑"+name) + " ")
		}
		b.WriteString(m.st.Path.Render(p))
		out = append(out, m.row(b.String(), strings.Join(right, " "), w, i == m.hist.cursor, m.focus == paneHistory))
	}
	if len(out) < h {
		switch {
		case m.hist.loading:
			out = append(out, pad(m.st.Faint.Render(" loading…"), w))
		case len(m.hist.view) == 0 && m.hist.filter != "":
			out = append(out, pad(m.st.Faint.Render(" no commit matches"), w))
		}
	}
	return out
}

// rightWidths are the widths of the agent and tool-use columns: as wide as
// their widest visible value, up to 12 and 16 cells.
func (m *Model) rightWidths(h int) (agent, toolUse int) {
	for i := m.hist.offset; i < len(m.hist.view) && i < m.hist.offset+h; i++ {
		r := &m.hist.recs[m.hist.view[i]]
		agent = max(agent, min(lipgloss.Width(sanitize(r.Agent)), 12))
		toolUse = max(toolUse, min(lipgloss.Width(sanitize(r.ToolUseID)), 16))
	}
	return agent, toolUse
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
	case errors.Is(m.keyErr, vault.ErrNoIdentity):
		left += " · " + m.st.StatusError.Render("no usable identity")
	case m.keyErr == nil || m.content.want != m.keyReq:
	case m.keyReq.show == showFile:
		left += " · " + m.st.StatusError.Render("wrong identity")
	default:
		left += " · " + m.st.StatusError.Render(short(m.keyReq.rev)+" encrypted to other keys")
	}
	if sum := m.syncSummary(); sum != "" {
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
	for _, k := range m.keys.ShortHelp() {
		if !k.Enabled() {
			continue
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
