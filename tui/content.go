package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
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
	c.want, c.title, c.kind, c.header, c.lines = req, title, kind, header, lines
	c.offset, c.wrapW, c.rows, c.cursor = 0, 0, nil, -1
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
		out = append(out, c.renderRow(c.rows[i], w, st))
	}
	for len(out) < h {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
}

func (c *contentModel) renderRow(r row, w int, st *Styles) string {
	if r.line < 0 {
		return pad(st.Faint.Render(r.text), w)
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
		if r.line == c.cursor {
			return pad(st.Cursor.Render(num+" │ ")+r.text, w)
		}
		return pad(st.LineNumber.Render(num+" │ ")+r.text, w)
	case bodyDiff:
		return pad(diffStyle(c.lines[r.line], st).Render(r.text), w)
	case bodyError:
		if r.line == 0 {
			return pad(st.ErrorTitle.Render(r.text), w)
		}
		return pad(st.ErrorText.Render(r.text), w)
	case bodyLoading:
		return pad(st.Faint.Render(r.text), w)
	}
	return pad(r.text, w)
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
