package textdiff

import (
	"slices"
	"strings"
)

// Labels name the three texts of a merge in conflict markers.
type Labels struct {
	Ours, Base, Theirs string
}

// Merge combines the changes from base to ours and from base to theirs, line by
// line, as git merge-file does. Changes to different places are both taken; the
// same change made on both sides is taken once. Changes that overlap or touch
// (on adjacent lines) conflict: the merged text then holds both versions between
// git-style markers,
//
//	<<<<<<< ours-label
//	ours' lines
//	=======
//	theirs' lines
//	>>>>>>> theirs-label
//
// with the lines both versions share at either end kept outside, and conflicts
// counts these regions. A side without a final newline gets one inside a
// conflict, so each marker starts a line.
func Merge(base, ours, theirs []byte, labels Labels) (merged []byte, conflicts int) {
	bl, ol, tl := Lines(base), Lines(ours), Lines(theirs)
	ho, ht := Diff(bl, ol), Diff(bl, tl)
	var out strings.Builder
	pos := 0
	for len(ho) > 0 || len(ht) > 0 {
		// A region starts at the first hunk of either side and takes in every hunk
		// of either side that overlaps or touches it.
		lo := regionStart(ho, ht)
		hi := lo
		var no, nt int
		for grown := true; grown; {
			grown = false
			for no < len(ho) && ho[no].A0 <= hi {
				hi, no, grown = max(hi, ho[no].A1), no+1, true
			}
			for nt < len(ht) && ht[nt].A0 <= hi {
				hi, nt, grown = max(hi, ht[nt].A1), nt+1, true
			}
		}
		writeLines(&out, bl[pos:lo])
		o := apply(bl, ol, ho[:no], lo, hi)
		t := apply(bl, tl, ht[:nt], lo, hi)
		switch {
		case nt == 0:
			writeLines(&out, o)
		case no == 0:
			writeLines(&out, t)
		case slices.Equal(o, t):
			writeLines(&out, o)
		default:
			conflicts++
			conflict(&out, o, t, labels)
		}
		ho, ht, pos = ho[no:], ht[nt:], hi
	}
	writeLines(&out, bl[pos:])
	return []byte(out.String()), conflicts
}

func regionStart(ho, ht []Hunk) int {
	switch {
	case len(ho) == 0:
		return ht[0].A0
	case len(ht) == 0:
		return ho[0].A0
	}
	return min(ho[0].A0, ht[0].A0)
}

// apply returns base lines lo..hi with the hunks (all inside them) applied.
func apply(base, side []string, hs []Hunk, lo, hi int) []string {
	var out []string
	for _, h := range hs {
		out = append(out, base[lo:h.A0]...)
		out = append(out, side[h.B0:h.B1]...)
		lo = h.A1
	}
	return append(out, base[lo:hi]...)
}

// conflict writes one conflict region, keeping the lines both sides share at its
// ends outside the markers.
func conflict(out *strings.Builder, o, t []string, labels Labels) {
	pre := 0
	for pre < len(o) && pre < len(t) && o[pre] == t[pre] {
		pre++
	}
	suf := 0
	for suf < len(o)-pre && suf < len(t)-pre && o[len(o)-1-suf] == t[len(t)-1-suf] {
		suf++
	}
	writeLines(out, o[:pre])
	out.WriteString(marker("<<<<<<<", labels.Ours))
	writeSide(out, o[pre:len(o)-suf])
	out.WriteString("=======\n")
	writeSide(out, t[pre:len(t)-suf])
	out.WriteString(marker(">>>>>>>", labels.Theirs))
	writeLines(out, o[len(o)-suf:])
}

func marker(m, label string) string {
	if label == "" {
		return m + "\n"
	}
	return m + " " + label + "\n"
}

func writeSide(out *strings.Builder, ls []string) {
	writeLines(out, ls)
	if len(ls) > 0 && !strings.HasSuffix(ls[len(ls)-1], "\n") {
		out.WriteByte('\n')
	}
}

func writeLines(out *strings.Builder, ls []string) {
	for _, l := range ls {
		out.WriteString(l)
	}
}
