package textdiff

import (
	"bytes"
	"fmt"
	"strings"
)

// Unified renders the change from a to b as a unified diff with context lines
// around each change, headed "--- aName" and "+++ bName". Equal texts give "". A
// text holding a NUL byte is binary: the answer is then one line saying the two
// differ, as git says it.
func Unified(aName, bName string, a, b []byte, context int) string {
	if bytes.Equal(a, b) {
		return ""
	}
	if bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 {
		return fmt.Sprintf("Binary files %s and %s differ\n", aName, bName)
	}
	al, bl := Lines(a), Lines(b)
	hs := Diff(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for len(hs) > 0 {
		// One block takes the hunks whose context would touch or overlap.
		n := 1
		for n < len(hs) && hs[n].A0-hs[n-1].A1 <= 2*context {
			n++
		}
		block := hs[:n]
		hs = hs[n:]
		a0 := max(block[0].A0-context, 0)
		b0 := block[0].B0 - (block[0].A0 - a0)
		last := block[len(block)-1]
		a1 := min(last.A1+context, len(al))
		b1 := last.B1 + (a1 - last.A1)
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", span(a0, a1), span(b0, b1))
		i := a0
		for _, h := range block {
			for ; i < h.A0; i++ {
				line(&out, ' ', al[i])
			}
			for _, l := range al[h.A0:h.A1] {
				line(&out, '-', l)
			}
			for _, l := range bl[h.B0:h.B1] {
				line(&out, '+', l)
			}
			i = h.A1
		}
		for ; i < a1; i++ {
			line(&out, ' ', al[i])
		}
	}
	return out.String()
}

// span is a hunk header's range: 1-based start and count, the count left out
// when it is 1 and the start naming the line before when it is 0.
func span(lo, hi int) string {
	switch hi - lo {
	case 0:
		return fmt.Sprintf("%d,0", lo)
	case 1:
		return fmt.Sprint(lo + 1)
	}
	return fmt.Sprintf("%d,%d", lo+1, hi-lo)
}

func line(out *strings.Builder, mark byte, l string) {
	out.WriteByte(mark)
	out.WriteString(l)
	if !strings.HasSuffix(l, "\n") {
		out.WriteString("\n\\ No newline at end of file\n")
	}
}
