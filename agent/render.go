package agent

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/agent/internal/contract"
)

// dirSize is how a directory's size prints in a listing.
const dirSize = "4K"

// formatSize prints a file size as the reference does: 0B, 1023B, 1K, 1.0K (1025
// bytes), 1.5K, 2M, 1024.0K (1048575 bytes). Halves round up, as JavaScript's
// toFixed does (1280 bytes is 1.3K). G is the largest unit.
func formatSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(max(n, 0), 10) + "B"
	}
	unit, suffix := int64(1024), "K"
	for _, u := range []string{"M", "G"} {
		if n/1024 < unit {
			break
		}
		unit, suffix = unit*1024, u
	}
	if n%unit == 0 {
		return strconv.FormatInt(n/unit, 10) + suffix
	}
	// Tenths, rounded half up; n%unit*20 < 1<<35 cannot overflow.
	tenths := n/unit*10 + (n%unit*20/unit+1)/2
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + suffix
}

// numberLine is one line of a view: its 1-based number right-aligned in 6
// columns, a tab, the text.
func numberLine(b *strings.Builder, n int, line string) {
	s := strconv.Itoa(n)
	for i := len(s); i < 6; i++ {
		b.WriteByte(' ')
	}
	b.WriteString(s)
	b.WriteByte('\t')
	b.WriteString(line)
}

// renderFile renders the view of file p with the given content.
//
// view_range applies only with exactly two numbers [a, b]: lines max(1, a) to b,
// where b = -1 is the last line and any other negative b counts from the end as
// a slice end does, as both SDKs' reference backends answer: lines max(1, a) to
// n+b of a file of n lines, so [2, -2] of five lines gives lines 2 and 3.
// Out-of-range values are clipped: b past the end is the last line, and a
// selection that ends before it starts (b = 0, b <= -n, b below a) selects
// nothing.
//
// Truncation: limit counts characters, that is Unicode code points (an invalid
// byte counts as one), of the whole answer before the notice: the header line
// and the numbered lines joined by "\n". When that is over limit, the answer
// keeps the header and as many whole numbered lines as fit in limit, and then
// the notice "\n[Output truncated at {limit} characters. Use view_range to see
// more.]", which is not counted. The header is kept even if it alone is over
// limit. limit <= 0 means no limit.
func renderFile(p, content string, viewRange []integer, limit int) string {
	lines := strings.Split(content, "\n")
	first, last := 1, len(lines)
	if len(viewRange) == 2 {
		first, last = contract.SelectLines(viewRange[0].n, viewRange[1].n, len(lines))
	}
	var b strings.Builder
	b.WriteString("Here's the content of " + p + " with line numbers:")
	size := utf8.RuneCountInString(b.String())
	b.WriteByte('\n')
	if first > last {
		return b.String() // an empty selection: just the header and its "\n"
	}
	cut := -1 // length of b after the last whole line that fits
	var line strings.Builder
	for n := first; n <= last; n++ {
		line.Reset()
		numberLine(&line, n, lines[n-1])
		if n > first {
			b.WriteByte('\n')
		}
		size += 1 + utf8.RuneCountInString(line.String())
		if limit > 0 && size > limit {
			cut = b.Len() - 1 // drop the "\n" before this line
			break
		}
		b.WriteString(line.String())
	}
	if cut < 0 {
		return b.String()
	}
	return b.String()[:cut] + "\n[Output truncated at " + strconv.Itoa(limit) + " characters. Use view_range to see more.]"
}

// snippet renders lines k-2 to k+2 of content (clipped to it), numbered.
func snippet(content string, k int) string {
	lines := strings.Split(content, "\n")
	var b strings.Builder
	for n := max(1, k-2); n <= min(len(lines), k+2); n++ {
		if n > max(1, k-2) {
			b.WriteByte('\n')
		}
		numberLine(&b, n, lines[n-1])
	}
	return b.String()
}
