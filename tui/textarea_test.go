package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/memvault/memvault/vault"
)

func typeInto(ta *textArea, keys ...string) {
	for _, k := range keys {
		switch k {
		case "ctrl+w", "ctrl+k", "ctrl+u", "alt+b", "alt+f":
			mod := tea.ModCtrl
			if k[0] == 'a' {
				mod = tea.ModAlt
			}
			ta.Update(tea.KeyPressMsg{Code: rune(k[len(k)-1]), Mod: mod})
		case "enter", "backspace", "delete", "left", "right", "up", "down", "home", "end", "tab":
			codes := map[string]rune{"enter": tea.KeyEnter, "backspace": tea.KeyBackspace, "delete": tea.KeyDelete,
				"left": tea.KeyLeft, "right": tea.KeyRight, "up": tea.KeyUp, "down": tea.KeyDown,
				"home": tea.KeyHome, "end": tea.KeyEnd, "tab": tea.KeyTab}
			ta.Update(tea.KeyPressMsg{Code: codes[k]})
		default:
			for _, r := range k {
				ta.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}
	}
}

// The editor's text area edits as a person expects, and keeps out what the
// interface would have to escape to draw.
func TestTextArea(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		keys       []string
		want       string
	}{
		{"type", "ab", []string{"end", "cd"}, "abcd"},
		{"newline", "abcd", []string{"right", "right", "enter"}, "ab\ncd"},
		{"join back", "ab\ncd", []string{"down", "home", "backspace"}, "abcd"},
		{"join forward", "ab\ncd", []string{"end", "delete"}, "abcd"},
		{"up keeps the column", "abcdef\nxy\nlmnopq", []string{"down", "down", "end", "up", "up", "Z"}, "abcdefZ\nxy\nlmnopq"},
		{"word back", "one two three", []string{"end", "ctrl+w"}, "one two "},
		{"kill to end", "one two", []string{"right", "right", "right", "ctrl+k"}, "one"},
		{"kill to start", "one two", []string{"end", "left", "left", "left", "ctrl+u"}, "two"},
		{"tab is spaces", "x", []string{"tab"}, "    x"},
		{"controls left out", "", []string{"a\x1b[31mb\u202ec\u200dd"}, "a[31mbcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ta := newTextArea(tc.text, lipgloss.NewStyle(), lipgloss.NewStyle())
			ta.SetSize(40, 5)
			typeInto(ta, tc.keys...)
			if got := ta.Value(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	ta := newTextArea("", lipgloss.NewStyle(), lipgloss.NewStyle())
	ta.SetSize(40, 5)
	ta.Update(tea.PasteMsg{Content: "one\r\ntwo\tthree"})
	if got := ta.Value(); got != "one\ntwo    three" || ta.Line() != 1 {
		t.Errorf("a paste gives %q, cursor on line %d", got, ta.Line())
	}
}

// A long line wraps at the area's width; up and down go by wrapped rows, and
// the view follows the cursor to the end of a long text and back.
func TestTextAreaWrapsAndScrolls(t *testing.T) {
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("line %02d", i))
	}
	lines[1] = strings.Repeat("abcdefghij", 5) // 50 cells: three rows of 18
	ta := newTextArea(strings.Join(lines, "\n"), lipgloss.NewStyle(), lipgloss.NewStyle())
	ta.SetSize(21, 4) // a gutter of 3, rows of 18
	rows := ta.View()
	if len(rows) != 4 || rows[1] != " 2 abcdefghijabcdefgh" || rows[2] != "   ijabcdefghijabcdef" {
		t.Errorf("the rows:\n%s", strings.Join(rows, "\n"))
	}
	typeInto(ta, "down", "down", "down") // three wrapped rows of line 2
	if ta.Line() != 1 || ta.col != 36 {
		t.Errorf("three rows down the cursor is at line %d, rune %d; want line 2, rune 36", ta.Line()+1, ta.col)
	}
	for range 60 {
		typeInto(ta, "down")
	}
	if rows := ta.View(); ta.Line() != 49 || !strings.HasPrefix(strings.TrimSpace(rows[3]), "50 line 49") {
		t.Errorf("at the end the cursor is on line %d, the rows:\n%s", ta.Line()+1, strings.Join(rows, "\n"))
	}
}

// The editor took 1.5 s to open a file of 188 KB and a second for each key
// typed in it: its text area drew every line of the file at every key. It
// draws what is in sight (BenchmarkEditLargeFile measures it: about 1 ms).
func TestEditLargeFileIsQuick(t *testing.T) {
	v, _ := newVault(t)
	var sb strings.Builder
	for i := 0; sb.Len() < 188<<10; i++ {
		fmt.Fprintf(&sb, "line %d: the agent wrote this much about the user's project today\n", i)
	}
	write(t, v, vault.Meta{Command: "create"}, "/memories/big.md", sb.String())
	d := newDriver(t, v, 120, 40)
	d.keys("j")
	start := time.Now()
	d.keys("e")
	for range 20 {
		d.typeText("x")
		_ = d.m.View()
	}
	// A bound for a loaded machine and the race detector: each key took
	// 300 ms before, 1 ms now.
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("opening a 188 KB file and typing 20 keys took %v", took)
	}
	if !strings.HasPrefix(d.m.editor.ta.Value(), strings.Repeat("x", 20)+"line 0:") {
		t.Errorf("the text begins %q", d.m.editor.ta.Value()[:40])
	}
}
