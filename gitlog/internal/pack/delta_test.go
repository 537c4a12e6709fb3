package pack

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// TestEdgeDelta: what edgeDelta writes gives the target back from the base,
// by go-git's patcher, including copies longer than one instruction holds.
// git's own reads the trees gc stores as such deltas in
// TestPackStoresTreesAsDeltas.
func TestEdgeDelta(t *testing.T) {
	long := bytes.Repeat([]byte("0123456789abcdef"), 1<<20+3) // past a copy's 16 MiB
	cases := []struct{ name, base, target string }{
		{"same", "tree entries", "tree entries"},
		{"middle", "aaaa-1-zzzz", "aaaa-22-zzzz"},
		{"start", "xbcdef", "ybcdef"},
		{"end", "abcdex", "abcdey"},
		{"grown", "abc", "abcabc"},
		{"shrunk", "abcabc", "abc"},
		{"nothing shared", "abc", "xyz"},
		{"long insert", "<>", "<" + strings.Repeat("i", 300) + ">"},
		{"long copies", string(long), string(long[:len(long)/2]) + "new" + string(long[len(long)/2:])},
		{"a copy past 16 MiB", string(long), string(long) + "x"},
	}
	for _, c := range cases {
		d, _ := edgeDelta([]byte(c.base), []byte(c.target))
		got, err := packfile.PatchDelta([]byte(c.base), d)
		if err != nil || string(got) != c.target {
			t.Errorf("%s: patched = %.40q, %v; want %.40q", c.name, got, err, c.target)
		}
	}
	if d, n := edgeDelta(long, append(long[:len(long):len(long)], 'x')); len(d) > 20 || n != 1 {
		t.Errorf("one byte added to %d: a delta of %d bytes, want a few", len(long), len(d))
	}
}

// TestSearchGivesUpOnGroupsThatNeverDelta: a group whose objects share
// nothing (commits with random messages, as sealed ones are) is read only
// until giveUpMisses of them failed to delta; a group that deltas from the
// start is compared to its end, and so is one that found a delta before
// giving up, whatever follows (chains of deltas end at the depth limit).
func TestSearchGivesUpOnGroupsThatNeverDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() []byte {
		b := make([]byte, 700)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	folder := bytes.Repeat([]byte("100644 a-sealed-name-of-some-length.md\x00aaaaaaaaaaaaaaaaaaaa"), 40)
	version := func(i int) []byte {
		v := bytes.Clone(folder)
		copy(v[len(v)/2:], fmt.Sprintf("%08d", i))
		return v
	}
	objects := map[Hash][]byte{}
	var cands []DeltaCand
	add := func(typ plumbing.ObjectType, name uint32, data []byte) Hash {
		h := computeHash(typ, data)
		objects[h] = data
		cands = append(cands, DeltaCand{hash: h, typ: typ, size: int64(len(data)), name: name, order: len(cands)})
		return h
	}
	var commits, trees, late []Hash
	for range 200 {
		commits = append(commits, add(plumbing.CommitObject, 0, random()))
	}
	for i := range 100 {
		trees = append(trees, add(plumbing.TreeObject, 1, version(i)))
	}
	// Unlike each other at first (fewer than giveUpMisses), then a few
	// versions of one folder, more than giveUpMisses unlike ones, and
	// versions again: found deltas, the search never gives up on it.
	for range giveUpMisses - 2 {
		late = append(late, add(plumbing.TreeObject, 2, random()))
	}
	for i := range 3 {
		late = append(late, add(plumbing.TreeObject, 2, version(1000+i)))
	}
	for range giveUpMisses + 4 {
		late = append(late, add(plumbing.TreeObject, 2, random()))
	}
	for i := range 45 {
		late = append(late, add(plumbing.TreeObject, 2, version(2000+i)))
	}
	loads := map[Hash]int{}
	load := func(h Hash) ([]byte, error) {
		loads[h]++
		return objects[h], nil
	}
	found, err := SearchDeltas(context.Background(), cands, load, DefaultWindow, DefaultDepth)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, h := range commits {
		read += loads[h]
		if _, ok := found.Deltas[h]; ok {
			t.Errorf("random commit %s stored as a delta", h)
		}
	}
	if read > giveUpMisses+1 {
		t.Errorf("%d of %d commits that never delta were read, want at most %d", read, len(commits), giveUpMisses+1)
	}
	for name, group := range map[string][]Hash{"folder": trees[1:], "late folder": late[len(late)-44:]} {
		n := 0
		for _, h := range group {
			if _, ok := found.Deltas[h]; ok {
				n++
			}
		}
		if whole := len(group) - n; whole > len(group)/DefaultDepth { // a chain ends at the depth limit
			t.Errorf("%s: %d of %d versions stored whole, want at most %d", name, whole, len(group), len(group)/DefaultDepth)
		}
	}
}

func FuzzEdgeDelta(f *testing.F) {
	f.Add([]byte("100644 a.md\x00aaaaaaaaaaaaaaaaaaaa"), []byte("100644 a.md\x00bbbbbbbbbbbbbbbbbbbb"))
	f.Add([]byte("x"), []byte("xy"))
	f.Fuzz(func(t *testing.T, base, target []byte) {
		if len(base) == 0 || len(target) == 0 {
			return // never compared: a delta's objects have bytes (MayDelta)
		}
		d, _ := edgeDelta(base, target)
		got, err := packfile.PatchDelta(base, d)
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("patched = %q, %v; want %q", got, err, target)
		}
	})
}

// An entry whose index puts the next entry far away (a pack served by another
// repository may say anything) is refused before its span is allocated.
func TestReuseLoadBoundsSpan(t *testing.T) {
	r := Reusable{e: PackEntry{off: 12, end: 12 + 1<<40}, Src: []byte{0x20}, size: 10}
	if _, err := r.Load(); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("load of a 1 TiB span for a 10-byte tree = %v, want a refusal", err)
	}
}
