package tui

import (
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// rect is a pane's place on the screen, border included.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout places the panes. Below 160 columns or 30 rows the tree and the
// content share the top and the history takes the full width below, so all its
// columns fit (they need 93 cells); on a larger screen the tree sits above the
// history in a left column, and the content, for long diffs, takes the full
// height on the right. The left column takes two fifths of the width, and grows up to
// half when the history's rows need it (histW, border included): a long path
// never takes the content pane, where diffs are read, below half the screen.
// The status bar and the help bar close the screen.
type layout struct {
	tree, hist, content rect
	statusY, helpY      int
}

// wideLayout is the width from which the history shares the left column.
const wideLayout = 160

func computeLayout(w, h, histW int) layout {
	main := h - 2
	if w < wideLayout || h < 30 {
		left := clamp(w*2/5, min(24, w/2), 48)
		top := main - main*9/20
		return layout{
			tree:    rect{0, 0, left, top},
			content: rect{left, 0, w - left, top},
			hist:    rect{0, top, w, main - top},
			statusY: main,
			helpY:   main + 1,
		}
	}
	left := clamp(histW, w*2/5, w/2)
	treeH := main * 2 / 5
	return layout{
		tree:    rect{0, 0, left, treeH},
		hist:    rect{0, treeH, left, main - treeH},
		content: rect{left, 0, w - left, main},
		statusY: main,
		helpY:   main + 1,
	}
}

// compose joins the pane boxes, each given as lines, into screen lines: a
// screen row is the row of each box covering it, left to right.
func compose(h int, boxes map[rect][]string) []string {
	out := make([]string, h)
	for y := range out {
		var parts []struct {
			x int
			s string
		}
		for r, lines := range boxes {
			if y >= r.y && y < r.y+r.h {
				parts = append(parts, struct {
					x int
					s string
				}{r.x, lines[y-r.y]})
			}
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i].x < parts[j].x })
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.s)
		}
		out[y] = b.String()
	}
	return out
}

// hit tells which pane holds the cell (x, y) and which of its rows, counted
// from 0 below the top border (-1 on a border).
func (l layout) hit(x, y int) (pane, int, bool) {
	for _, c := range []struct {
		p pane
		r rect
	}{{paneTree, l.tree}, {paneHistory, l.hist}, {paneContent, l.content}} {
		if c.r.contains(x, y) {
			row := y - c.r.y - 1
			if row >= c.r.h-2 {
				row = -1
			}
			return c.p, row, true
		}
	}
	return 0, 0, false
}

// box frames body lines (each already exactly r.w-2 cells wide) with a rounded
// border carrying title on its top edge.
func box(r rect, title string, body []string, focused bool, st *Styles) []string {
	border, tstyle := st.Border, st.Title
	if focused {
		border, tstyle = st.BorderFocused, st.TitleFocused
	}
	iw := r.w - 2
	title = ansi.Truncate(title, max(iw-3, 0), "…")
	fill := max(iw-1-lipgloss.Width(title)-2, 0)
	top := border.Render("╭─") + tstyle.Render(" "+title+" ") + border.Render(strings.Repeat("─", fill)+"╮")
	if lipgloss.Width(title) == 0 {
		top = border.Render("╭" + strings.Repeat("─", iw) + "╮")
	}
	out := make([]string, 0, r.h)
	out = append(out, top)
	side := border.Render("│")
	for i := 0; i < r.h-2; i++ {
		line := strings.Repeat(" ", iw)
		if i < len(body) {
			line = body[i]
		}
		out = append(out, side+line+side)
	}
	return append(out, border.Render("╰"+strings.Repeat("─", iw)+"╯"))
}

// overlay draws the lines of a box centred over the frame's lines.
func overlay(frame []string, w int, boxLines []string) {
	overlayAt(frame, w, boxLines, max((len(frame)-len(boxLines))/2, 0))
}

// overlayAt draws the lines of a box centred across the frame, from line y.
func overlayAt(frame []string, w int, boxLines []string, y int) {
	bw := 0
	for _, l := range boxLines {
		bw = max(bw, lipgloss.Width(l))
	}
	x := max((w-bw)/2, 0)
	for i, l := range boxLines {
		if y+i >= len(frame) {
			break
		}
		base := frame[y+i]
		left := ansi.Truncate(base, x, "")
		right := ansi.TruncateLeft(base, x+lipgloss.Width(l), "")
		frame[y+i] = left + "\x1b[m" + l + "\x1b[m" + right
	}
}
