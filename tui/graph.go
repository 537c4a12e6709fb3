package tui

// The history's merge graph, as tig and git log --graph draw it on one row a
// commit: each lane a column, ● the commit, │ a lane passing by, ╮ a merge's
// second parent opening a lane, ┤ one that joins a lane already open, and ╯
// a lane that ends in the commit it reached. It shows only when the loaded
// records hold a merge and the history is the whole vault's, unfiltered:
// then commits of two clones read as two lines, not one interleaved list.

import (
	"slices"
	"strings"

	"github.com/memvault/memvault/vault"
)

// graph lays out the lanes of recs, in their order (each commit before its
// parents), as one string a record, all as wide; nil when there is no merge.
func graph(recs []vault.Record) []string {
	merge := slices.ContainsFunc(recs, func(r vault.Record) bool { return len(r.Parents) > 1 })
	if !merge {
		return nil
	}
	var lanes []string // the commit each lane waits for; "" for a free lane
	free := func() int {
		if i := slices.Index(lanes, ""); i >= 0 {
			return i
		}
		lanes = append(lanes, "")
		return len(lanes) - 1
	}
	rows := make([][]rune, len(recs))
	width := 0
	for k, r := range recs {
		col := slices.Index(lanes, r.Commit)
		if col < 0 {
			col = free()
		}
		passing := make([]bool, len(lanes))
		for i, c := range lanes {
			passing[i] = c != "" && i != col
		}
		marks := map[int]rune{col: '●'}
		for i, c := range lanes {
			if i != col && c == r.Commit { // another line reaches this commit
				marks[i] = '╯'
				lanes[i] = ""
			}
		}
		lanes[col] = ""
		var more []string // a merge's other parents
		if len(r.Parents) > 0 {
			lanes[col], more = r.Parents[0], r.Parents[1:]
		}
		for _, p := range more {
			if i := slices.Index(lanes, p); i >= 0 {
				marks[i] = '┤'
				continue
			}
			i := free()
			lanes[i] = p
			marks[i] = '╮'
		}
		lo, hi := col, col
		for i := range marks {
			lo, hi = min(lo, i), max(hi, i)
		}
		row := make([]rune, 0, 2*len(lanes))
		for i := range lanes {
			ch := ' '
			if m, ok := marks[i]; ok {
				ch = m
			} else if i < len(passing) && passing[i] {
				ch = '│'
			} else if i > lo && i < hi {
				ch = '─'
			}
			gap := ' '
			if i >= lo && i < hi {
				gap = '─'
			}
			row = append(row, ch, gap)
		}
		row = []rune(strings.TrimRight(string(row), " "))
		rows[k] = row
		width = max(width, len(row))
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r) + strings.Repeat(" ", width-len(r))
	}
	return out
}
