package textdiff

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// patch applies hunks from Diff(a, b) to a.
func patch(a, b []string, hs []Hunk) []string {
	var out []string
	i := 0
	for _, h := range hs {
		out = append(out, a[i:h.A0]...)
		out = append(out, b[h.B0:h.B1]...)
		i = h.A1
	}
	return append(out, a[i:]...)
}

// lcs is the length of a longest common subsequence, by dynamic programming.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] > cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

func randomLines(rng *rand.Rand, n, alphabet int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a'+rng.IntN(alphabet))) + "\n"
	}
	return out
}

// TestDiffShortest checks on random texts that the hunks turn a into b, are in
// order and apart, and edit as few lines as possible.
func TestDiffShortest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		a := randomLines(rng, rng.IntN(30), 1+rng.IntN(5))
		b := randomLines(rng, rng.IntN(30), 1+rng.IntN(5))
		hs := Diff(a, b)
		if got := patch(a, b, hs); strings.Join(got, "") != strings.Join(b, "") {
			t.Fatalf("Diff(%q, %q) = %v does not turn a into b", a, b, hs)
		}
		edits := 0
		for i, h := range hs {
			edits += h.A1 - h.A0 + h.B1 - h.B0
			if i > 0 && (h.A0 <= hs[i-1].A1 || h.B0 <= hs[i-1].B1) {
				t.Fatalf("Diff(%q, %q): hunks %v out of order or adjacent", a, b, hs)
			}
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("Diff(%q, %q) edits %d lines, want %d", a, b, edits, want)
		}
	}
}

// TestDiffLargeStaysBounded: the search gives up on a stretch that differs by
// more than maxCost (4096) lines, so its work, counted in steps (diagonals
// extended and pairs of lines compared), grows with the texts' length, not with
// the square of their difference. Two unrelated texts of 40,000 lines differ by
// some 75,000 lines: a search without the bound takes billions of steps; within
// it, one search of about 4096² steps. A near copy costs a few steps per line. The count
// is the work itself, not a time, so the test fails alike on any machine.
func TestDiffLargeStaysBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	unrelatedA := randomLines(rng, 40000, 1000)
	unrelatedB := randomLines(rng, 40000, 1000)
	nearA := randomLines(rng, 40000, 1000)
	nearB := slices.Clone(nearA)
	for i := range 20 {
		nearB[i*1999] = "changed\n"
	}
	for _, c := range []struct {
		name    string
		a, b    []string
		maxStep int
	}{
		// One search that gives up extends about 2 × 4096²/2 diagonals, and
		// compares few lines along them in unrelated texts; one search is all
		// such texts need, as what it gives up on is taken as replaced whole.
		{"unrelated", unrelatedA, unrelatedB, 3 * 4096 * 4096},
		// Twenty one-line changes: each split search ends within a few diagonals.
		{"twenty lines changed", nearA, nearB, 20 * 80000},
	} {
		d := newDiffer(c.a, c.b)
		d.compare(0, len(c.a), 0, len(c.b))
		t.Logf("%s: %d steps for %d lines", c.name, d.steps, len(c.a)+len(c.b))
		if d.steps > c.maxStep {
			t.Errorf("Diff of %s texts of %d and %d lines took %d steps, want at most %d", c.name, len(c.a), len(c.b), d.steps, c.maxStep)
		}
		if got := patch(c.a, c.b, d.hunks()); strings.Join(got, "") != strings.Join(c.b, "") {
			t.Errorf("Diff of %s texts does not turn a into b", c.name)
		}
	}
}

func TestLines(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a\n": "a\n", "a\nb": "a\n|b", "\n\n": "\n|\n", "a\r\nb\n": "a\r\n|b\n"} {
		if got := strings.Join(Lines([]byte(in)), "|"); got != want {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnified(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"same\n", "same\n", ""},
		{"", "new\n", "--- a\n+++ b\n@@ -0,0 +1 @@\n+new\n"},
		{"old\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-old\n"},
		{"a\nb\nc\n", "a\nB\nc\n", "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"a\nb", "a\nb\n", "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\nY\n11\n",
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -7,5 +7,5 @@\n 7\n 8\n 9\n-10\n+Y\n 11\n"},
		{"1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\n6\nY\n",
			"--- a\n+++ b\n@@ -1,7 +1,7 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n-7\n+Y\n"},
		{"a\x00", "b", "Binary files a and b differ\n"},
	}
	for _, c := range cases {
		if got := Unified("a", "b", []byte(c.a), []byte(c.b), 3); got != c.want {
			t.Errorf("Unified(%q, %q) =\n%s\nwant\n%s", c.a, c.b, got, c.want)
		}
	}
}

func TestMerge(t *testing.T) {
	l := Labels{Ours: "ours", Base: "base", Theirs: "theirs"}
	cases := []struct {
		name, base, ours, theirs, want string
		conflicts                      int
	}{
		{"apart", "a\nb\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "a\nb\nc\nD\ne\n", "a\nB\nc\nD\ne\n", 0},
		{"same change", "a\nb\n", "a\nX\n", "a\nX\n", "a\nX\n", 0},
		{"one side", "a\nb\n", "a\nb\n", "a\nc\nb\n", "a\nc\nb\n", 0},
		{"adjacent", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n",
			"a\n<<<<<<< ours\nB\nc\n=======\nb\nC\n>>>>>>> theirs\nd\n", 1},
		{"insert after a deleted line", "a\nb\n", "a\nb\nc\n", "a\n",
			"a\n<<<<<<< ours\nb\nc\n=======\n>>>>>>> theirs\n", 1},
		{"shared ends stay outside", "x\n", "p\n1\nq\n", "p\n2\nq\n", "p\n<<<<<<< ours\n1\n=======\n2\n>>>>>>> theirs\nq\n", 1},
		{"no final newline", "a\n", "b", "c", "<<<<<<< ours\nb\n=======\nc\n>>>>>>> theirs\n", 1},
		{"both empty from base", "a\n", "", "", "", 0},
	}
	for _, c := range cases {
		got, n := Merge([]byte(c.base), []byte(c.ours), []byte(c.theirs), l)
		if string(got) != c.want || n != c.conflicts {
			t.Errorf("%s: Merge(%q, %q, %q) = %q, %d; want %q, %d", c.name, c.base, c.ours, c.theirs, got, n, c.want, c.conflicts)
		}
	}
}

// FuzzMerge: Merge never panics; merging a text with itself changes nothing; a
// change made on one side only, or the same on both, is taken cleanly.
func FuzzMerge(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nC\nd"))
	f.Add([]byte(""), []byte("x"), []byte("\n\n"))
	f.Add([]byte("1\n2\n3\n4\n5\n6\n"), []byte("1\n3\n4\n5\n6\n7\n"), []byte("0\n1\n2\n3\n5\n6\n"))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		l := Labels{Ours: "o", Base: "b", Theirs: "t"}
		Merge(base, ours, theirs, l)
		for _, x := range [][]byte{base, ours, theirs} {
			if got, n := Merge(x, x, x, l); !bytes.Equal(got, x) || n != 0 {
				t.Fatalf("Merge(x, x, x) = %q, %d; want %q, 0", got, n, x)
			}
		}
		if got, n := Merge(base, ours, base, l); !bytes.Equal(got, ours) || n != 0 {
			t.Fatalf("Merge(base, ours, base) = %q, %d; want ours %q", got, n, ours)
		}
		if got, n := Merge(base, base, theirs, l); !bytes.Equal(got, theirs) || n != 0 {
			t.Fatalf("Merge(base, base, theirs) = %q, %d; want theirs %q", got, n, theirs)
		}
		if got, n := Merge(base, ours, ours, l); !bytes.Equal(got, ours) || n != 0 {
			t.Fatalf("Merge(base, ours, ours) = %q, %d; want %q", got, n, ours)
		}
	})
}
