// Package textdiff compares and merges text by lines: a Myers diff, a unified
// diff renderer and a three-way merge with git-style conflict markers.
//
// A line is a piece of the text up to and including "\n"; the last line may lack
// one, and then differs from the same text with it.
package textdiff

// maxCost bounds the edit distance the search spends effort on within one
// subproblem; past it, the subproblem is taken as replaced as a whole. The result
// is still a correct diff, only not the shortest, and the cost stays bounded.
const maxCost = 4096

// Hunk says that lines A0..A1 of the old text (0-based, half-open) became lines
// B0..B1 of the new one. An insertion has A0 == A1, a deletion B0 == B1.
type Hunk struct {
	A0, A1, B0, B1 int
}

// Lines splits text into lines, each keeping its "\n".
func Lines(text []byte) []string {
	var out []string
	for start := 0; start < len(text); {
		end := start
		for end < len(text) && text[end] != '\n' {
			end++
		}
		if end < len(text) {
			end++
		}
		out = append(out, string(text[start:end]))
		start = end
	}
	return out
}

// Diff returns the hunks that turn a into b, in order, none adjacent to another.
// It is Myers' algorithm in linear space; the hunks are a shortest edit script
// unless a stretch of the texts differs by more than a few thousand lines.
func Diff(a, b []string) []Hunk {
	d := newDiffer(a, b)
	d.compare(0, len(a), 0, len(b))
	return d.hunks()
}

// newDiffer numbers the lines of a and b, equal lines alike, for compare.
func newDiffer(a, b []string) *differ {
	ids := map[string]int{}
	num := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: num(a), b: num(b)}
	d.delA = make([]bool, len(a))
	d.insB = make([]bool, len(b))
	return d
}

type differ struct {
	a, b       []int
	delA, insB []bool
	// steps counts the search's work: the diagonals it extends and the pairs of
	// lines it compares. A test reads it to hold the cost to its bound.
	steps int
}

func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
	default:
		x, y, ok := d.middle(aLo, aHi, bLo, bHi)
		if !ok {
			d.compare(aLo, aHi, bHi, bHi)
			d.compare(aHi, aHi, bLo, bHi)
			return
		}
		d.compare(aLo, x, bLo, y)
		d.compare(x, aHi, y, bHi)
	}
}

// middle finds where a shortest path from (aLo, bLo) to (aHi, bHi) crosses the
// middle of its length, searching from both ends at once (Myers 1986, 4b). Both
// ranges are non-empty and differ in their first and last lines. ok is false when
// the search gives up past maxCost.
func (d *differ) middle(aLo, aHi, bLo, bHi int) (x, y int, ok bool) {
	n, m := aHi-aLo, bHi-bLo
	maxD := (n + m + 1) / 2
	off := maxD + 1
	vf := make([]int, 2*maxD+3) // furthest x on each diagonal k = x-y, from the start
	vb := make([]int, 2*maxD+3) // the same from the end, counting lines from the end
	for i := range vf {
		vf[i], vb[i] = -1, -1
	}
	delta := n - m
	odd := delta%2 != 0
	fwd := func(i, j int) bool { d.steps++; return d.a[aLo+i] == d.b[bLo+j] }
	bwd := func(i, j int) bool { d.steps++; return d.a[aHi-i-1] == d.b[bHi-j-1] }
	for dd := 0; dd <= maxD && dd <= maxCost; dd++ {
		for k := -dd; k <= dd; k += 2 {
			d.steps++
			x, y, ok := reach(vf, off, k, dd, n, m, fwd)
			if !ok {
				continue
			}
			if kb := delta - k; odd && kb >= -(dd-1) && kb <= dd-1 && vb[off+kb] >= 0 && x >= n-vb[off+kb] {
				return d.split(aLo, aHi, bLo, bHi, aLo+x, bLo+y)
			}
		}
		for k := -dd; k <= dd; k += 2 {
			d.steps++
			x, _, ok := reach(vb, off, k, dd, n, m, bwd)
			if !ok {
				continue
			}
			if kf := delta - k; !odd && kf >= -dd && kf <= dd && vf[off+kf] >= 0 && vf[off+kf] >= n-x {
				return d.split(aLo, aHi, bLo, bHi, aLo+vf[off+kf], bLo+vf[off+kf]-kf)
			}
		}
	}
	return 0, 0, false
}

// reach extends diagonal k by one more edit from the previous round's furthest
// points on k-1 and k+1, staying inside the n by m box, then along its snake of
// equal lines. It records and returns the point, or ok false if k is out of reach.
func reach(v []int, off, k, dd, n, m int, eq func(i, j int) bool) (x, y int, ok bool) {
	v[off+k] = -1
	if k < -m || k > n {
		return 0, 0, false
	}
	x = -1
	if dd == 0 {
		x = 0
	} else {
		if up := v[off+k+1]; k+1 <= dd-1 && up >= 0 && up-k <= m {
			x = up // one line of b inserted
		}
		if left := v[off+k-1]; k-1 >= -(dd-1) && left >= 0 && left+1 <= n && left+1 > x {
			x = left + 1 // one line of a deleted
		}
		if x < 0 {
			return 0, 0, false
		}
	}
	y = x - k
	for x < n && y < m && eq(x, y) {
		x, y = x+1, y+1
	}
	v[off+k] = x
	return x, y, true
}

// split checks that a split point leaves two smaller problems, so the recursion
// ends whatever the search returned.
func (d *differ) split(aLo, aHi, bLo, bHi, x, y int) (int, int, bool) {
	if x == aLo && y == bLo || x == aHi && y == bHi || x < aLo || x > aHi || y < bLo || y > bHi {
		return 0, 0, false
	}
	return x, y, true
}

func (d *differ) hunks() []Hunk {
	var out []Hunk
	i, j := 0, 0
	for i < len(d.delA) || j < len(d.insB) {
		if i < len(d.delA) && j < len(d.insB) && !d.delA[i] && !d.insB[j] {
			i, j = i+1, j+1
			continue
		}
		h := Hunk{A0: i, B0: j}
		for i < len(d.delA) && d.delA[i] {
			i++
		}
		for j < len(d.insB) && d.insB[j] {
			j++
		}
		h.A1, h.B1 = i, j
		out = append(out, h)
	}
	return out
}
