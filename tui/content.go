package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/memvault/memvault/vault"
)

// show is what the content pane is asked to show.
type show int

const (
	showNone    show = iota
	showDir          // a directory's summary, made without I/O
	showFile         // a file at the head
	showAsOf         // a file as it was at a commit
	showCommit       // a commit's details and diff
	showBetween      // the diff between two commits
)

// contentReq names what the content pane shows. A result for any other request
// is stale and dropped.
type contentReq struct {
	show show
	path string
	rev  string // the commit read from: the head for showFile
	from string // the older commit of showBetween
}

// bodyKind tells how the content pane draws its lines.
type bodyKind int

const (
	bodyInfo    bodyKind = iota // plain lines
	bodyText                    // a file, with line numbers
	bodyDiff                    // a unified diff, coloured by line
	bodyError                   // an error panel
	bodyLoading                 // waiting for a command
)

// contentModel is the content pane: a file with line numbers, a diff or a
// message, soft-wrapped to the pane's width and drawn from offset.
type contentModel struct {
	*common
	frame
	keyErr error      // why what keyReq asked for could not be decrypted
	keyReq contentReq // the content keyErr is about; the warning shows while it is shown
	// failed says the read of want failed for a reason a new try may mend
	// (a pack merged away under a long-lived reader, a busy disk), not for
	// want of a key: the next key reads it again, so the pane never stays dead.
	failed   bool
	prov     []provRef // what each row of a blame or search leads to
	jumpLine int       // the line a search result opens its file at

	find finder // the text searched for in the pane (/, n, N)

	// words shows a diff by words (W): raw is the diff as read, lines then
	// its word-diffed form (see wordDiffLines).
	words bool
	raw   []string

	// nowrap cuts long lines at the pane's edge instead of wrapping them
	// (w), and hscroll is how many cells of them are scrolled off to the left.
	nowrap  bool
	hscroll int

	// reading says a read for the pane runs (see Model.contentCmd);
	// cancelRead stops it; queued is the newest request that waits for it.
	reading    bool
	cancelRead context.CancelFunc
	queued     *contentReq

	want   contentReq
	title  string
	kind   bodyKind
	header []string // lines drawn plain above the body (a commit's details)
	lines  []string

	offset int
	cursor int   // the selected line of a blame or search, or a line jumped to; -1 for none
	wrapW  int   // the width rows were wrapped at
	rows   []row // the display rows at wrapW
}

// row is one display row: a piece of a line, numbered when it starts one.
type row struct {
	num  int // 1-based line number, 0 for a continuation or a header line
	text string
	line int // index into lines, -1 for a header line
}

// set replaces what the pane shows, from the top.
func (c *contentModel) set(req contentReq, title string, kind bodyKind, header, lines []string) {
	c.want, c.title, c.kind, c.header, c.lines, c.raw = req, title, kind, header, lines, lines
	if kind == bodyDiff && c.words {
		c.lines = wordDiffLines(lines)
	}
	c.offset, c.wrapW, c.rows, c.cursor = 0, 0, nil, -1
	c.failed, c.hscroll = false, 0
	if c.find.text != "" {
		c.findAll() // marked in what shows now; n goes to them
	}
}

// wrap computes the display rows for text width w.
func (c *contentModel) wrap(w int) {
	if c.wrapW == w && c.rows != nil {
		return
	}
	c.wrapW = max(w, 1)
	c.rows = c.rows[:0]
	for _, h := range c.header {
		for _, piece := range wrapLine(h, c.wrapW) {
			c.rows = append(c.rows, row{text: piece, line: -1})
		}
	}
	tw := c.wrapW
	if c.kind == bodyText {
		tw = max(c.wrapW-c.gutter(), 1)
	}
	if c.isProvList() {
		tw = max(c.wrapW-1, 1) // the cursor's mark
	}
	for i, l := range c.lines {
		if c.isProvList() { // one row a line, so the cursor moves by lines: cut, not wrapped
			c.rows = append(c.rows, row{text: ansi.Truncate(l, tw, "…"), line: i, num: i + 1})
			continue
		}
		if c.nowrap {
			c.rows = append(c.rows, row{text: c.cut(l, tw), line: i, num: i + 1})
			continue
		}
		if sign := diffSign(l); c.kind == bodyDiff && sign != "" && tw > 1 {
			// Every row of a long added or removed line keeps its sign: without
			// colour (NO_COLOR) it is all that tells them apart.
			for _, piece := range wrapLine(l[1:], tw-1) {
				c.rows = append(c.rows, row{text: sign + piece, line: i})
			}
			continue
		}
		for j, piece := range wrapLine(l, tw) {
			r := row{text: piece, line: i}
			if j == 0 {
				r.num = i + 1
			}
			c.rows = append(c.rows, r)
		}
	}
}

// gutter is the width of the line-number column with its separator.
func (c *contentModel) gutter() int {
	return len(fmt.Sprint(len(c.lines))) + 3
}

// scroll moves the view by delta rows, within what there is for a pane of
// height h.
func (c *contentModel) scroll(delta, h int) {
	c.offset = clamp(c.offset+delta, 0, max(len(c.rows)-h, 0))
}

// render draws the visible rows, each exactly w cells wide.
func (c *contentModel) render(w, h int, st *Styles) []string {
	c.wrap(w)
	out := make([]string, 0, h)
	for i := c.offset; i < len(c.rows) && len(out) < h; i++ {
		out = append(out, c.renderRow(i, w, st))
	}
	for len(out) < h {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
}

func (c *contentModel) renderRow(i, w int, st *Styles) string {
	r := c.rows[i]
	if r.line < 0 {
		return pad(c.highlight(r.text, i, st.Faint), w)
	}
	if c.isProvList() {
		if r.line == c.cursor {
			return st.Cursor.Render(pad("›"+r.text, w))
		}
		return pad(" "+r.text, w)
	}
	switch c.kind {
	case bodyText:
		g := c.gutter() - 3
		num := strings.Repeat(" ", g)
		if r.num > 0 {
			num = fmt.Sprintf("%*d", g, r.num)
		}
		text := c.highlight(r.text, i, lipgloss.NewStyle())
		if r.line == c.cursor {
			return pad(st.Cursor.Render(num+" │ ")+text, w)
		}
		return pad(st.LineNumber.Render(num+" │ ")+text, w)
	case bodyDiff:
		if strings.HasPrefix(c.lines[r.line], "~") && c.find.text == "" {
			return pad(c.wordRow(i, st), w)
		}
		return pad(c.highlight(r.text, i, diffStyle(c.lines[r.line], st)), w)
	case bodyError:
		if r.line == 0 {
			return pad(st.ErrorTitle.Render(r.text), w)
		}
		return pad(st.ErrorText.Render(r.text), w)
	case bodyLoading:
		return pad(st.Faint.Render(r.text), w)
	}
	return pad(c.highlight(r.text, i, lipgloss.NewStyle()), w)
}

// cut is the part of line l in sight without wrapping: tw cells from
// hscroll, with a "…" where more lies to the right; a diff line keeps its
// sign however far it is scrolled.
func (c *contentModel) cut(l string, tw int) string {
	sign := ""
	if c.kind == bodyDiff && tw > 1 && (diffSign(l) != "" || strings.HasPrefix(l, " ")) && c.hscroll > 0 {
		sign, l, tw = l[:1], l[1:], tw-1
	}
	l = ansi.Cut(l, c.hscroll, c.hscroll+tw+1)
	if ansi.StringWidth(l) > tw {
		l = ansi.Truncate(l, tw, "…")
	}
	return sign + l
}

// setWords shows diffs by words, or by lines.
func (c *contentModel) setWords(words bool) {
	c.words, c.wrapW = words, 0
	if c.kind == bodyDiff {
		c.lines = c.raw
		if words {
			c.lines = wordDiffLines(c.raw)
		}
		if c.find.text != "" {
			c.findAll()
		}
	}
	if words {
		c.setStatus("diffs by words: [-taken out-]{+put in+} (W shows them by lines)", false)
	} else {
		c.setStatus("diffs by lines (W shows them by words)", false)
	}
}

// wordRow draws row i of a word-diffed line, its marks in the colours of a
// removed and an added line. A mark wrapped from the row before goes on.
func (c *contentModel) wordRow(i int, st *Styles) string {
	r := c.rows[i]
	state := byte(0) // '-' or '+' inside a mark
	first := i
	for first > 0 && c.rows[first-1].line == r.line {
		first--
	}
	for k := first; k < i; k++ {
		_, state = wordMarks(c.rows[k].text, state, st)
	}
	out, _ := wordMarks(r.text, state, st)
	return out
}

// wordMarks styles text, in which [-…-] and {+…+} mark words taken out and
// put in; state says whether it starts inside a mark, and the state at its
// end is returned.
func wordMarks(text string, state byte, st *Styles) (string, byte) {
	var b strings.Builder
	plain := lipgloss.NewStyle()
	seg := 0
	styleOf := func(s byte) lipgloss.Style {
		switch s {
		case '-':
			return st.DiffDel
		case '+':
			return st.DiffAdd
		}
		return plain
	}
	for j := 0; j < len(text); {
		switch {
		case state == 0 && (strings.HasPrefix(text[j:], "[-") || strings.HasPrefix(text[j:], "{+")):
			b.WriteString(plain.Render(text[seg:j]))
			state, seg = text[j+1], j
			j += 2
		case state == '-' && strings.HasPrefix(text[j:], "-]"), state == '+' && strings.HasPrefix(text[j:], "+}"):
			b.WriteString(styleOf(state).Render(text[seg : j+2]))
			state, seg = 0, j+2
			j += 2
		default:
			j++
		}
	}
	b.WriteString(styleOf(state).Render(text[seg:]))
	return b.String(), state
}

// setWrap wraps long lines, or cuts them at the edge.
func (c *contentModel) setWrap(wrap bool) {
	c.nowrap, c.hscroll, c.wrapW = !wrap, 0, 0
	if wrap {
		c.setStatus("long lines wrap (w cuts them)", false)
	} else {
		c.setStatus("long lines are cut at the edge: ← and → scroll them (w wraps them)", false)
	}
}

// scrollSide scrolls cut lines by delta cells, within the longest.
func (c *contentModel) scrollSide(delta int) {
	longest := 0
	for _, l := range c.lines {
		longest = max(longest, ansi.StringWidth(l))
	}
	c.hscroll = clamp(c.hscroll+delta, 0, max(longest-c.width/2, 0))
	c.wrapW = 0 // cut again
}

// diffSign is the sign of a unified diff's added or removed line, "" for
// any other line.
func diffSign(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return ""
	case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
		return l[:1]
	}
	return ""
}

// wrapLine cuts plain text s into pieces of at most w cells, between words
// where it can.
func wrapLine(s string, w int) []string {
	if ansi.StringWidth(s) <= w {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// pad truncates or pads styled s to exactly w cells.
func pad(s string, w int) string {
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

func (c *contentModel) onContent(msg contentMsg) {
	if msg.req != c.want {
		return // the user moved on
	}
	if msg.err != nil {
		c.showError(msg.req, msg.err)
		return
	}
	c.set(msg.req, msg.title, msg.kind, msg.header, msg.lines)
}

// showHeadError puts in the content pane why the vault's newest state cannot
// be read at all (see headErrorLines).
func (c *contentModel) showHeadError(err error) {
	c.set(contentReq{}, "memvault", bodyError, nil, headErrorLines(err, c.v.IdentityFile()))
}

// headErrorLines say why the vault's newest state cannot be read, and what
// to do. A sealed vault's names and history open only under its key, which
// the identity opens: without it nothing can be shown, and the vault's own
// words say which identity it tried and which keys it is encrypted to.
func headErrorLines(err error, identity string) []string {
	if errors.Is(err, vault.ErrNoIdentity) || errors.Is(err, vault.ErrDecrypt) || errors.Is(err, vault.ErrPassphrase) {
		return []string{
			"Cannot open the vault: no usable identity",
			"",
			"The vault is sealed: its names, sizes and history open only with an identity among its recipients, and " +
				identity + " is missing, unreadable or not one of them:",
			sanitize(err.Error()),
			"",
			"Name the right identity with --identity FILE or MEMVAULT_IDENTITY.",
		}
	}
	return []string{"Cannot read the vault", "", sanitize(err.Error()), "", "Any key reads it again."}
}

// showError puts an error in the content pane. A missing or wrong identity gets
// a panel that says what still works and how to fix it.
func (c *contentModel) showError(req contentReq, err error) {
	var lines []string
	retry := false
	switch {
	case errors.Is(err, vault.ErrNoIdentity):
		c.keyErr, c.keyReq = err, req
		lines = []string{
			"Cannot decrypt: no usable identity",
			"",
			"The identity file " + c.v.IdentityFile() + " is missing or unreadable,",
			"so memory contents and diffs cannot be shown.",
			"",
			"The tree, file sizes and history do not need it and still work.",
			"Name the right identity with --identity FILE or MEMVAULT_IDENTITY.",
		}
	case errors.Is(err, vault.ErrDecrypt) && req.show != showFile:
		c.keyErr, c.keyReq = err, req
		lines = []string{
			"Cannot decrypt: this commit is encrypted to other keys",
			"",
			"The identity file " + c.v.IdentityFile() + " cannot decrypt the files of " + short(req.rev) +
				": they were encrypted to the recipients of their time, such as before a key was added or changed.",
			"",
			"Files and commits encrypted to this identity still read as usual.",
		}
	case errors.Is(err, vault.ErrDecrypt):
		c.keyErr, c.keyReq = err, req
		lines = []string{
			"Cannot decrypt: wrong identity",
			"",
			"The identity file " + c.v.IdentityFile() + " cannot decrypt this memory:",
			"it was encrypted to other recipients.",
			"",
			"The tree, file sizes and history do not need it and still work.",
			"Name the right identity with --identity FILE or MEMVAULT_IDENTITY.",
		}
	default:
		lines = []string{"Cannot show this", "", sanitize(err.Error()), "", "Any key reads it again."}
		retry = true
	}
	title, header := req.path, []string(nil)
	if req.show == showCommit || req.show == showBetween {
		title, header = c.title, c.header // the details need no key
	}
	c.set(req, title, bodyError, header, lines)
	c.failed = retry
}

func (c *contentModel) onProv(msg provMsg) {
	if msg.req != c.want {
		return // the user moved on
	}
	if msg.err != nil {
		c.showError(msg.req, msg.err)
		return
	}
	c.set(msg.req, msg.title, msg.kind, nil, msg.lines)
	c.prov = msg.refs
	c.cursor = 0
}

// Update implements component: the keys that scroll the content or move the
// cursor of a blame or a search, the wheel, and what it asked to show.
func (c *contentModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if c.nowrap && !c.isProvList() {
			switch msg.String() {
			case "left", "h":
				c.scrollSide(-max(c.width/4, 1))
				return nil
			case "right", "l":
				c.scrollSide(max(c.width/4, 1))
				return nil
			}
		}
		d, ok := navDelta(&c.keys, msg, max(c.height, 1))
		if !ok {
			return nil
		}
		if c.isProvList() {
			c.moveCursor(d)
		} else {
			c.scroll(d, c.height)
		}
	case scrollMsg:
		c.scroll(msg.delta, c.height)
	case contentMsg:
		c.onContent(msg)
		c.jumpTo()
	case provMsg:
		c.onProv(msg)
	}
	return nil
}

// moveCursor moves the cursor of a provenance list by delta lines, keeping
// its first row in view.
func (c *contentModel) moveCursor(delta int) {
	c.cursor = clamp(c.cursor+delta, 0, max(len(c.lines)-1, 0))
	c.wrap(c.width)
	for i, r := range c.rows {
		if r.line == c.cursor && r.num > 0 {
			c.offset = keepInView(c.offset, i, c.height, len(c.rows))
			break
		}
	}
}

// Title implements component.
func (c *contentModel) Title() string {
	if t := sanitize(c.title); t != "" {
		return t
	}
	return "memvault"
}

// View implements component.
func (c *contentModel) View() []string {
	return c.render(c.width, c.height, &c.st)
}

// jumpTo scrolls a file just loaded to the line a search jumped to.
func (c *contentModel) jumpTo() {
	if c.jumpLine == 0 || c.kind != bodyText {
		return
	}
	c.wrap(c.width)
	for i, r := range c.rows {
		if r.num == c.jumpLine {
			c.offset = clamp(i-2, 0, max(len(c.rows)-(c.height), 0))
			c.cursor = r.line
			break
		}
	}
	c.jumpLine = 0
}
