package tui

// The editor's text area. The bubbles text area draws every line of its text
// at each key and each frame, which on a file of 188 KB took a second a key;
// this one keeps the lines and a cursor, and draws only the rows in sight,
// so a key costs the same on a long file as on a short one.

import (
	"strconv"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// textArea is an editable text: its lines, a cursor, and the first row in
// sight. Lines wrap at the width; the cursor is a line and a rune in it.
type textArea struct {
	lines    [][]rune
	row, col int // the cursor
	goal     int // the cell a move up or down aims for; -1 for the cursor's own
	top, sub int // the first row in sight: a line, and which of its wrapped rows

	width, height int
	version       int // counts the changes, for what is worked out from the text
	numStyle      lipgloss.Style
	cursorStyle   lipgloss.Style
}

func newTextArea(text string, numStyle, cursorStyle lipgloss.Style) *textArea {
	t := &textArea{goal: -1, numStyle: numStyle, cursorStyle: cursorStyle, width: 1, height: 1}
	for _, l := range strings.Split(text, "\n") {
		t.lines = append(t.lines, []rune(l))
	}
	return t
}

// Value is the text.
func (t *textArea) Value() string {
	var b strings.Builder
	for i, l := range t.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(l))
	}
	return b.String()
}

// Line is the cursor's line, from 0.
func (t *textArea) Line() int { return t.row }

// SetSize gives the area its room, line numbers included.
func (t *textArea) SetSize(w, h int) {
	t.width, t.height = max(w, 1), max(h, 1)
	t.show()
}

// gutter is the width of the line numbers with their space.
func (t *textArea) gutter() int { return len(strconv.Itoa(len(t.lines))) + 1 }

// textWidth is the cells a row of text gets.
func (t *textArea) textWidth() int { return max(t.width-t.gutter(), 1) }

// runeWidth is the cells r takes.
func runeWidth(r rune) int {
	if r < 0x80 {
		return 1
	}
	return ansi.StringWidth(string(r))
}

// breaks returns where line's wrapped rows start, as rune indexes (the first
// is 0), for rows w cells wide.
func breaks(line []rune, w int) []int {
	out := []int{0}
	cells := 0
	for i, r := range line {
		rw := runeWidth(r)
		if cells+rw > w && cells > 0 {
			out = append(out, i)
			cells = 0
		}
		cells += rw
	}
	return out
}

// subOf is the wrapped row of its line the rune col falls in.
func subOf(bs []int, col int) int {
	s := 0
	for i, b := range bs {
		if col >= b {
			s = i
		}
	}
	return s
}

// cellsTo is the cells from the start of col's wrapped row to col.
func cellsTo(line []rune, bs []int, col int) int {
	start := bs[subOf(bs, col)]
	n := 0
	for _, r := range line[start:min(col, len(line))] {
		n += runeWidth(r)
	}
	return n
}

// colAt is the rune of wrapped row sub of line nearest cell x.
func colAt(line []rune, bs []int, sub, x int) int {
	start := bs[sub]
	end := len(line)
	if sub+1 < len(bs) {
		end = bs[sub+1] - 1 // the last rune of a row that wraps: the cursor stays on its row
	}
	n, i := 0, start
	for i < end {
		rw := runeWidth(line[i])
		if n+rw > x {
			break
		}
		n += rw
		i++
	}
	return max(i, start)
}

// show scrolls so that the cursor's row is in sight.
func (t *textArea) show() {
	w := t.textWidth()
	sub := subOf(breaks(t.lines[t.row], w), t.col)
	if t.row < t.top || t.row == t.top && sub < t.sub {
		t.top, t.sub = t.row, sub
		return
	}
	// Rows from the top of the view to the cursor's, counted only as far as
	// a screen.
	rows, line, s := 0, t.top, t.sub
	for rows < t.height && (line < t.row || line == t.row && s < sub) {
		rows++
		if s+1 < len(breaks(t.lines[line], w)) {
			s++
		} else {
			line, s = line+1, 0
		}
	}
	if rows < t.height {
		return
	}
	// The cursor is below: its row goes to the bottom.
	t.top, t.sub = t.row, sub
	for range t.height - 1 {
		if t.sub > 0 {
			t.sub--
		} else if t.top > 0 {
			t.top--
			t.sub = len(breaks(t.lines[t.top], w)) - 1
		}
	}
}

// Update handles a key or a paste.
func (t *textArea) Update(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		t.insert(msg.Content)
	case tea.KeyPressMsg:
		t.key(msg)
	}
	t.show()
}

func (t *textArea) key(msg tea.KeyPressMsg) {
	vertical := false
	switch msg.String() {
	case "left", "ctrl+b":
		t.left()
	case "right", "ctrl+f":
		t.right()
	case "up", "ctrl+p":
		t.vertical(-1)
		vertical = true
	case "down", "ctrl+n":
		t.vertical(1)
		vertical = true
	case "pgup":
		for range max(t.height-1, 1) {
			t.vertical(-1)
		}
		vertical = true
	case "pgdown":
		for range max(t.height-1, 1) {
			t.vertical(1)
		}
		vertical = true
	case "home", "ctrl+a":
		t.col = 0
	case "end", "ctrl+e":
		t.col = len(t.lines[t.row])
	case "ctrl+home", "alt+<":
		t.row, t.col = 0, 0
	case "ctrl+end", "alt+>":
		t.row = len(t.lines) - 1
		t.col = len(t.lines[t.row])
	case "alt+left", "alt+b", "ctrl+left":
		t.wordLeft()
	case "alt+right", "alt+f", "ctrl+right":
		t.wordRight()
	case "enter", "ctrl+m", "ctrl+j":
		t.insert("\n")
	case "backspace", "ctrl+h":
		t.backspace()
	case "delete":
		t.delete()
	case "alt+backspace", "ctrl+w":
		end := t.col
		t.wordLeft()
		if t.col < end && t.row < len(t.lines) {
			t.cut(t.col, end)
		}
	case "ctrl+k":
		if t.col < len(t.lines[t.row]) {
			t.cut(t.col, len(t.lines[t.row]))
		} else {
			t.delete()
		}
	case "ctrl+u":
		t.cut(0, t.col)
		t.col = 0
	case "tab":
		t.insert(strings.Repeat(" ", tabWidth-cellsTo(t.lines[t.row], []int{0}, t.col)%tabWidth))
	default:
		if msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			t.insert(msg.Text)
		}
	}
	if !vertical {
		t.goal = -1
	}
}

// insert puts s at the cursor, which goes after it. What the interface
// would have to escape to draw (controls, bidi controls, joiners, invalid
// bytes) is left out, and a tab becomes spaces: the text drawn is the text.
func (t *textArea) insert(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\t", strings.Repeat(" ", tabWidth))
	s = strings.Map(func(r rune) rune {
		if r != '\n' && (r == unicode.ReplacementChar || sanitize(string(r)) != string(r)) {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return
	}
	parts := strings.Split(s, "\n")
	line := t.lines[t.row]
	tail := append([]rune(nil), line[t.col:]...)
	first := append(line[:t.col:t.col], []rune(parts[0])...)
	if len(parts) == 1 {
		t.lines[t.row] = append(first, tail...)
		t.col += len([]rune(parts[0]))
		t.version++
		return
	}
	added := make([][]rune, 0, len(parts))
	added = append(added, first)
	for _, p := range parts[1 : len(parts)-1] {
		added = append(added, []rune(p))
	}
	last := []rune(parts[len(parts)-1])
	col := len(last)
	added = append(added, append(last, tail...))
	t.lines = append(t.lines[:t.row], append(added, t.lines[t.row+1:]...)...)
	t.row += len(parts) - 1
	t.col = col
	t.version++
}

// cut removes the runes from a to b of the cursor's line.
func (t *textArea) cut(a, b int) {
	l := t.lines[t.row]
	t.lines[t.row] = append(l[:a:a], l[b:]...)
	t.version++
}

func (t *textArea) backspace() {
	switch {
	case t.col > 0:
		t.cut(t.col-1, t.col)
		t.col--
	case t.row > 0:
		prev := t.lines[t.row-1]
		t.col = len(prev)
		t.lines[t.row-1] = append(prev[:len(prev):len(prev)], t.lines[t.row]...)
		t.lines = append(t.lines[:t.row], t.lines[t.row+1:]...)
		t.row--
		t.version++
	}
}

func (t *textArea) delete() {
	switch {
	case t.col < len(t.lines[t.row]):
		t.cut(t.col, t.col+1)
	case t.row+1 < len(t.lines):
		l := t.lines[t.row]
		t.lines[t.row] = append(l[:len(l):len(l)], t.lines[t.row+1]...)
		t.lines = append(t.lines[:t.row+1], t.lines[t.row+2:]...)
		t.version++
	}
}

func (t *textArea) left() {
	switch {
	case t.col > 0:
		t.col--
	case t.row > 0:
		t.row--
		t.col = len(t.lines[t.row])
	}
}

func (t *textArea) right() {
	switch {
	case t.col < len(t.lines[t.row]):
		t.col++
	case t.row+1 < len(t.lines):
		t.row, t.col = t.row+1, 0
	}
}

// vertical moves the cursor one wrapped row up (-1) or down (1), toward the
// cell it aimed for since the last move of another kind.
func (t *textArea) vertical(dir int) {
	w := t.textWidth()
	bs := breaks(t.lines[t.row], w)
	if t.goal < 0 {
		t.goal = cellsTo(t.lines[t.row], bs, t.col)
	}
	sub := subOf(bs, t.col) + dir
	switch {
	case sub >= 0 && sub < len(bs):
	case dir < 0 && t.row > 0:
		t.row--
		bs = breaks(t.lines[t.row], w)
		sub = len(bs) - 1
	case dir > 0 && t.row+1 < len(t.lines):
		t.row++
		bs = breaks(t.lines[t.row], w)
		sub = 0
	default:
		return
	}
	t.col = colAt(t.lines[t.row], bs, sub, t.goal)
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func (t *textArea) wordLeft() {
	if t.col == 0 {
		t.left()
		return
	}
	l := t.lines[t.row]
	for t.col > 0 && !isWord(l[t.col-1]) {
		t.col--
	}
	for t.col > 0 && isWord(l[t.col-1]) {
		t.col--
	}
}

func (t *textArea) wordRight() {
	l := t.lines[t.row]
	if t.col == len(l) {
		t.right()
		return
	}
	for t.col < len(l) && !isWord(l[t.col]) {
		t.col++
	}
	for t.col < len(l) && isWord(l[t.col]) {
		t.col++
	}
}

// goToLine puts the cursor at the start of line i.
func (t *textArea) goToLine(i int) {
	t.row, t.col, t.goal = clamp(i, 0, len(t.lines)-1), 0, -1
	t.show()
}

// View draws the rows in sight, each exactly as wide as the area: the line
// number on a line's first row, then its text, the cursor in reverse.
func (t *textArea) View() []string {
	w := t.textWidth()
	g := t.gutter()
	out := make([]string, 0, t.height)
	line, sub := t.top, t.sub
	for len(out) < t.height {
		if line >= len(t.lines) {
			out = append(out, strings.Repeat(" ", t.width))
			continue
		}
		l := t.lines[line]
		bs := breaks(l, w)
		num := strings.Repeat(" ", g)
		if sub == 0 {
			n := strconv.Itoa(line + 1)
			num = strings.Repeat(" ", g-1-len(n)) + n + " "
		}
		end := len(l)
		if sub+1 < len(bs) {
			end = bs[sub+1]
		}
		text := l[bs[sub]:end]
		var b strings.Builder
		b.WriteString(t.numStyle.Render(num))
		cells := 0
		for i, r := range text {
			s := string(r)
			if line == t.row && bs[sub]+i == t.col {
				s = t.cursorStyle.Render(s)
			}
			b.WriteString(s)
			cells += runeWidth(r)
		}
		if line == t.row && t.col == end && (sub+1 == len(bs)) {
			b.WriteString(t.cursorStyle.Render(" "))
			cells++
		}
		out = append(out, b.String()+strings.Repeat(" ", max(w-cells, 0)))
		if sub+1 < len(bs) {
			sub++
		} else {
			line, sub = line+1, 0
		}
	}
	return out
}
