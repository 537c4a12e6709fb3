package tui

// Word diff (W), as git diff --word-diff=plain shows it: a removed line and
// the added line that replaced it become one line, marked ~, in which the
// words taken out read [-so-] and those put in {+so+}. It tells at a glance
// which word of a long line changed; without colour the marks still say it.

import (
	"strings"
	"unicode"
)

// wordDiffLines pairs each run of removed lines in a unified diff with the
// run of added lines after it, line for line, and shows each pair as one
// word-diffed line; the rest stays as it is.
func wordDiffLines(lines []string) []string {
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); {
		if diffSign(lines[i]) != "-" {
			out = append(out, lines[i])
			i++
			continue
		}
		del := i
		for i < len(lines) && diffSign(lines[i]) == "-" {
			i++
		}
		add := i
		for i < len(lines) && diffSign(lines[i]) == "+" {
			i++
		}
		dels, adds := lines[del:add], lines[add:i]
		n := min(len(dels), len(adds))
		for k := range n {
			out = append(out, "~"+wordDiff(dels[k][1:], adds[k][1:]))
		}
		out = append(out, dels[n:]...)
		out = append(out, adds[n:]...)
	}
	return out
}

// maxWordTokens bounds the words compared in a pair of lines: past it the
// pair is shown whole, taken out and put in.
const maxWordTokens = 600

// wordDiff marks what of a was taken out and what of b put in, by words.
func wordDiff(a, b string) string {
	x, y := tokens(a), tokens(b)
	if len(x) > maxWordTokens || len(y) > maxWordTokens {
		return "[-" + a + "-]{+" + b + "+}"
	}
	// The longest common subsequence of the tokens, from the end.
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b2 strings.Builder
	var del, ins strings.Builder
	flush := func() {
		if del.Len() > 0 {
			b2.WriteString("[-" + del.String() + "-]")
		}
		if ins.Len() > 0 {
			b2.WriteString("{+" + ins.String() + "+}")
		}
		del.Reset()
		ins.Reset()
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			flush()
			b2.WriteString(x[i])
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			ins.WriteString(y[j])
			j++
		default:
			del.WriteString(x[i])
			i++
		}
	}
	flush()
	return b2.String()
}

// tokens cuts s into words, runs of spaces, and single other characters.
func tokens(s string) []string {
	var out []string
	kind := func(r rune) int {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			return 1
		case unicode.IsSpace(r):
			return 2
		}
		return 0
	}
	start, prev := 0, -1
	for i, r := range s {
		k := kind(r)
		if i > start && (k != prev || k == 0) {
			out = append(out, s[start:i])
			start = i
		}
		prev = k
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
