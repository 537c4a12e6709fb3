package tui

// Find in the content pane, as less and lazygit's main view have it: / with
// the focus on the content asks for a text, every occurrence is marked, and
// the view goes to the first at or below the top row; n and N go to the next
// and the previous, round the end. The search ignores case unless the text
// has a capital letter (smart case). esc drops it.

import (
	"fmt"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// match is an occurrence of the found text: its line and its byte offsets.
type match struct {
	line, start, end int
}

// finder is what the content pane searches for, and where it found it.
type finder struct {
	text    string // as typed; "" for no search
	fold    bool   // ignore case
	matches []match
	at      int // the current match
}

// smartFold tells whether a search for text ignores case: when text has no
// capital letter.
func smartFold(text string) bool {
	return !strings.ContainsFunc(text, unicode.IsUpper)
}

// indexAll returns the byte offsets of every occurrence of sub in s, which
// fold compares without case.
func indexAll(s, sub string, fold bool) [][2]int {
	if sub == "" {
		return nil
	}
	hay := s
	if fold {
		hay, sub = strings.ToLower(s), strings.ToLower(sub)
		if len(hay) != len(s) { // offsets in hay must hold in s
			hay = s
		}
	}
	var out [][2]int
	for i := 0; i <= len(hay)-len(sub); {
		j := strings.Index(hay[i:], sub)
		if j < 0 {
			break
		}
		out = append(out, [2]int{i + j, i + j + len(sub)})
		i += j + max(len(sub), 1)
	}
	return out
}

// setFind searches the content's lines for text and goes to the first
// match at or below the top row.
func (c *contentModel) setFind(text string) {
	c.find = finder{text: text, fold: smartFold(text)}
	if text == "" {
		return
	}
	c.findAll()
	top := 0
	if c.offset < len(c.rows) {
		top = max(c.rows[c.offset].line, 0)
	}
	c.find.at = 0
	for i, m := range c.find.matches {
		if m.line >= top {
			c.find.at = i
			break
		}
	}
	c.showMatch()
}

// findAll lists every match of the search in the lines.
func (c *contentModel) findAll() {
	c.find.matches, c.find.at = nil, 0
	for i, l := range c.lines {
		for _, m := range indexAll(l, c.find.text, c.find.fold) {
			c.find.matches = append(c.find.matches, match{line: i, start: m[0], end: m[1]})
		}
	}
}

// nextMatch goes to the next match (dir 1) or the previous one (-1), round
// the end.
func (c *contentModel) nextMatch(dir int) {
	n := len(c.find.matches)
	if n == 0 {
		return
	}
	c.find.at = ((c.find.at+dir)%n + n) % n
	c.showMatch()
}

// showMatch scrolls the current match into view, a few rows below the top,
// and says which it is.
func (c *contentModel) showMatch() {
	if len(c.find.matches) == 0 {
		c.setStatus(fmt.Sprintf("find %q: no match", c.find.text), true)
		return
	}
	m := c.find.matches[c.find.at]
	if c.nowrap {
		// Cut lines scroll sideways to the match, a third of the way in.
		tw := c.width
		if c.kind == bodyText {
			tw -= c.gutter()
		}
		x := ansi.StringWidth(c.lines[m.line][:m.start])
		if x < c.hscroll || x+ansi.StringWidth(c.find.text) > c.hscroll+tw-1 {
			c.hscroll, c.wrapW = max(x-tw/3, 0), 0
		}
	}
	c.wrap(c.width)
	if i := c.matchRow(m); i >= 0 {
		if i < c.offset || i >= c.offset+c.height || c.offset+c.height > len(c.rows) {
			c.offset = clamp(i-2, 0, max(len(c.rows)-c.height, 0))
		}
	}
	c.setStatus(fmt.Sprintf("find %q: match %d of %d · n next, N previous, esc clears", c.find.text, c.find.at+1, len(c.find.matches)), false)
}

// matchRow is the display row that holds match m: the piece of its line in
// which its occurrence falls, or the line's first row.
func (c *contentModel) matchRow(m match) int {
	first := -1
	k := 0 // which occurrence of the line m is
	for _, o := range c.find.matches {
		if o.line == m.line && o.start < m.start {
			k++
		}
	}
	for i, r := range c.rows {
		if r.line != m.line {
			continue
		}
		if first < 0 {
			first = i
		}
		n := len(indexAll(r.text, c.find.text, c.find.fold))
		if k < n {
			return i
		}
		k -= n
	}
	return first
}

// highlight draws text (a piece of line, drawn in style st) with the found
// text marked; the current match is marked apart.
func (c *contentModel) highlight(text string, rowIdx int, base lipgloss.Style) string {
	if c.find.text == "" {
		return base.Render(text)
	}
	occ := indexAll(text, c.find.text, c.find.fold)
	if len(occ) == 0 {
		return base.Render(text)
	}
	cur := -1
	if len(c.find.matches) > 0 && c.matchRow(c.find.matches[c.find.at]) == rowIdx {
		// Which occurrence of this row is the current one.
		m := c.find.matches[c.find.at]
		k := 0
		for _, o := range c.find.matches {
			if o.line == m.line && o.start < m.start {
				k++
			}
		}
		for i := range c.rows[:rowIdx] {
			if c.rows[i].line == m.line {
				k -= len(indexAll(c.rows[i].text, c.find.text, c.find.fold))
			}
		}
		cur = k
	}
	var b strings.Builder
	prev := 0
	for i, o := range occ {
		b.WriteString(base.Render(text[prev:o[0]]))
		st := c.st.Found
		if i == cur {
			st = c.st.FoundCurrent
		}
		b.WriteString(st.Render(text[o[0]:o[1]]))
		prev = o[1]
	}
	b.WriteString(base.Render(text[prev:]))
	return b.String()
}

// startFind asks for the text to find in the content.
func (m *Model) startFind() tea.Cmd {
	m.mode = modeFind
	m.input.Prompt = "find: "
	m.input.Placeholder = "text in this pane (case ignored unless it has a capital)"
	m.input.SetValue("")
	return m.input.Focus()
}

// findKey edits the text to find, searching as it is typed: enter keeps the
// search for n and N, esc drops it.
func (m *Model) findKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Submit):
		m.mode = modeBrowse
		m.input.Blur()
		m.content.setFind(m.input.Value())
		return nil
	case key.Matches(msg, m.keys.Cancel):
		m.mode = modeBrowse
		m.input.Blur()
		m.content.setFind("")
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if q := m.input.Value(); q != m.content.find.text {
		m.content.setFind(q)
		m.status = "" // the prompt shows; the count shows once it is accepted
	}
	return cmd
}
