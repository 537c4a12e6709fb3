package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/memvault/memvault/vault/escape"
)

// tabWidth is how many columns a tab in a memory file takes.
const tabWidth = 4

// sanitize makes text from the vault safe to draw: memory files and commit
// messages are written by an agent, maybe a collaborator's, and a control
// character or escape sequence in them must not reach the terminal. Tabs
// become spaces; other controls, bidi controls, zero-width joiners and
// invalid bytes show as their escapes (\x1b, \u202e, \u200d, \xff).
func sanitize(s string) string {
	s = escape.Line(s)
	// A zero-width joiner makes one glyph of several emoji in some terminals
	// and not in others (tmux draws each), so no width is right for both and
	// a row holding one pushed its border off the screen: it shows as its
	// escape, like the other invisible controls.
	s = strings.ReplaceAll(s, "\u200d", `\u200d`)
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			k := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", k))
			col += k
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// splitLines splits a file into sanitized lines; a final newline ends the last
// line rather than starting an empty one.
func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = sanitize(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// relTime says how long before now t was, in the largest whole unit.
func relTime(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "future"
	case d < 45*time.Second:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", max(int(d/time.Minute), 1))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	case d < 2*365*24*time.Hour:
		return fmt.Sprintf("%dmo ago", int(d/(30*24*time.Hour)))
	}
	return fmt.Sprintf("%dy ago", int(d/(365*24*time.Hour)))
}

// absTime is t in now's location, to the minute.
func absTime(t, now time.Time) string {
	return t.In(now.Location()).Format("2006-01-02 15:04")
}

// humanSize is a byte count in at most four characters or so.
func humanSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%dB", n)
	case n < 10*1024:
		return fmt.Sprintf("%.1fK", float64(n)/1024)
	case n < 1000*1024:
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprintf("%.1fM", float64(n)/(1024*1024))
}

// short is the abbreviated commit hash shown everywhere.
func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// diffStyle picks the style of a unified diff line by its first character.
func diffStyle(line string, st *Styles) lipgloss.Style {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"),
		strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "=== "):
		return st.DiffHeader
	case strings.HasPrefix(line, "+"):
		return st.DiffAdd
	case strings.HasPrefix(line, "-"):
		return st.DiffDel
	case strings.HasPrefix(line, "@@"):
		return st.DiffHunk
	}
	return lipgloss.NewStyle()
}
