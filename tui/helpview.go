package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// helpView is the full list of keys, drawn over the panes. It lays the keys
// out in as many balanced columns as the screen is wide, and when they are
// taller than the screen it scrolls, so that every key can be read at any size
// from 40x10 up.
type helpView struct {
	offset int // the first body row shown
}

// helpEntry is one key and what it does.
type helpEntry struct{ key, desc string }

// helpEntries lists every key once, in the full help's order, whatever applies
// right now.
func helpEntries() []helpEntry {
	var out []helpEntry
	for _, g := range DefaultKeyMap().FullHelp() {
		for _, b := range g {
			out = append(out, helpEntry{b.Help().Key, b.Help().Desc})
		}
	}
	return out
}

// helpGap is the space between two columns of keys; helpMaxWidth bounds the
// box on a wide screen, where a line of seven short columns reads badly.
const (
	helpGap      = 3
	helpMaxWidth = 110
)

// helpColumns lays entries out in columns, filled top to bottom, as many as
// fit in width w; each column is returned as its lines, all of one width.
func helpColumns(entries []helpEntry, w int, st *Styles) [][]string {
	for cols := len(entries); cols >= 1; cols-- {
		rows := (len(entries) + cols - 1) / cols
		var out [][]string
		total := 0
		for start := 0; start < len(entries); start += rows {
			col := entries[start:min(start+rows, len(entries))]
			kw, dw := 0, 0
			for _, e := range col {
				kw = max(kw, lipgloss.Width(e.key))
				dw = max(dw, lipgloss.Width(e.desc))
			}
			lines := make([]string, 0, rows)
			for _, e := range col {
				lines = append(lines, st.Help.FullKey.Render(pad(e.key, kw))+" "+st.Help.FullDesc.Render(pad(e.desc, dw)))
			}
			for len(lines) < rows {
				lines = append(lines, strings.Repeat(" ", kw+1+dw))
			}
			out = append(out, lines)
			total += kw + 1 + dw
		}
		total += helpGap * (len(out) - 1)
		if total <= w || cols == 1 {
			return out
		}
	}
	return nil
}

// lines returns the body of the help for a box of at most w by h cells, with
// the box's title.
func (hv *helpView) lines(w, h int, st *Styles) ([]string, string) {
	inner := max(min(w, helpMaxWidth)-4, 1)
	cols := helpColumns(helpEntries(), inner, st)
	var body []string
	for r := range cols[0] {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = c[r]
		}
		body = append(body, pad(strings.Join(parts, strings.Repeat(" ", helpGap)), inner))
	}
	room := max(h-2, 1)
	hv.offset = clamp(hv.offset, 0, max(len(body)-room, 0))
	title := "Keys"
	if len(body) > room {
		title = fmt.Sprintf("Keys %d-%d/%d · j/k scroll", hv.offset+1, min(hv.offset+room, len(body)), len(body))
		body = body[hv.offset:min(hv.offset+room, len(body))]
	}
	return body, title
}

// update scrolls the help; it reports false for a key that is not a scroll.
func (hv *helpView) update(msg tea.KeyPressMsg, page int) bool {
	k := DefaultKeyMap()
	switch {
	case key.Matches(msg, k.Up):
		hv.offset--
	case key.Matches(msg, k.Down):
		hv.offset++
	case key.Matches(msg, k.PageUp):
		hv.offset -= page
	case key.Matches(msg, k.PageDown):
		hv.offset += page
	case key.Matches(msg, k.Top):
		hv.offset = 0
	case key.Matches(msg, k.Bottom):
		hv.offset = 1 << 30
	default:
		return false
	}
	hv.offset = max(hv.offset, 0) // the upper bound depends on the size, kept when drawn
	return true
}

// fullHelpBox frames the help, whole, no larger than the screen.
func (m *Model) fullHelpBox() []string {
	body, title := m.helpView.lines(m.width, m.height, &m.st)
	w := 0
	for _, l := range body {
		w = max(w, lipgloss.Width(l))
	}
	w = min(w+4, m.width)
	framed := make([]string, len(body))
	for i, l := range body {
		framed[i] = " " + pad(l, w-4) + " "
	}
	return box(rect{w: w, h: len(body) + 2}, title, framed, true, &m.st)
}
