package gitlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Parents answers as ReadCommit does, from the history index and, for a
// commit the index does not hold, from the commit's header.
func TestParents(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	var hs []Hash
	for i := range 5 {
		hs = append(hs, commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte{byte(i)}}))
	}
	wl, err := r.Lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m, err := wl.Commit(context.Background(), hs[4], nil, CommitInfo{Message: "merge\n", Author: sig(), Committer: sig(), Parents: []Hash{hs[4], hs[1]}})
	wl.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	hs = append(hs, m)
	flush(t, r)
	r.Close()
	for _, indexed := range []bool{true, false} {
		if !indexed {
			if err := os.Remove(filepath.Join(dir, stateDir, indexName)); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			c, err := r.ReadCommit(h)
			if err != nil {
				t.Fatal(err)
			}
			r.commits = newObjCache[*Commit](16) // Parents must not lean on what ReadCommit decoded
			got, err := r.Parents(h)
			if err != nil || !slices.Equal(got, c.ParentHashes) {
				t.Errorf("indexed %v: Parents(%s) = %v, %v; want %v", indexed, h, got, err, c.ParentHashes)
			}
		}
		r.Close()
	}
}

// headerParents reads a header only as git writes it; anything else goes to
// the full decoder.
func TestHeaderParents(t *testing.T) {
	a, b := hexA, hexB
	for _, tc := range []struct {
		data string
		want []string
		ok   bool
	}{
		{"tree " + a + "\nauthor x\n\nmsg", nil, true},
		{"tree " + a + "\nparent " + b + "\nauthor x\n\nmsg", []string{b}, true},
		{"tree " + a + "\nparent " + b + "\nparent " + a + "\n", []string{b, a}, true},
		{"tree " + a + "\nparent " + strings.ToUpper(b) + "\n", nil, false},
		{"tree " + a + "\nparent " + b[:39] + "\n", nil, false},
		{"tree " + a + "\nparent " + b + " \n", nil, false},
		{"parent " + b + "\ntree " + a + "\n", nil, false},
		{"tree " + a, nil, false},
	} {
		got, ok := headerParents([]byte(tc.data))
		var gs []string
		for _, h := range got {
			gs = append(gs, h.String())
		}
		if ok != tc.ok || !slices.Equal(gs, tc.want) {
			t.Errorf("headerParents(%q) = %v, %v; want %v, %v", tc.data, gs, ok, tc.want, tc.ok)
		}
	}
}

// commitSeeds are commits in the layout parseCommit reads (canonical true) and
// around it: what git, memvault and go-git write, and what they do not.
var commitSeeds = []struct {
	data      string
	canonical bool
}{
	{"tree " + hexA + "\nauthor A U Thor <a@example.com> 1700000000 +0200\ncommitter C <c@example.com> 1700000001 -0130\n\nsubject\n\nbody\n", true},
	{"tree " + hexA + "\nparent " + hexB + "\nparent " + hexA + "\nauthor a <a@x> 1 +0000\ncommitter c <c@x> 2 +0000\n\nmerge\n", true},
	{"tree " + hexA + "\nparent " + hexB + "\nauthor memvault <memvault@memvault> 1795746890 +0000\ncommitter memvault <memvault@localhost> 1795746890 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgttvuoycNaGPeAuvl7Kc/\n \n aC1lZDI1NTE5AAAAQGlWHURezHRcGLDYJc8veSJU/W+crYafPJXMNNH4DI5Kf+9B\n -----END SSH SIGNATURE-----\n\nmemvault\n\nMemvault-Sealed: YFQ9Nbm6VPxStliBR4QUMdiffLf14z1t\n", true},
	{"tree " + hexA + "\nauthor <> 0 +0000\ncommitter odd name  < e > 99999999999 +1400\n\n", true},
	{"tree " + hexA + "\nauthor no email\ncommitter x <y> notatime +0000\n\n\n\nmsg\r\n", true},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\n\n", true},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\nencoding ISO-8859-1\n\nmsg", false},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\nmergetag object " + hexB + "\n type commit\n\nmsg", false},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\ngpgsig one\n two\ngpgsig three\n four\n\nmsg", false},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\ngpgsig one\n two", false},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\nx-extra v\n\nmsg", false},
	{"tree " + hexA + "\ncommitter c <c> 2 +0000\nauthor a <a> 1 +0000\n\nmsg", false},
	{"tree " + hexA + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000", false},
	{"tree " + strings.ToUpper(hexA) + "\nauthor a <a> 1 +0000\ncommitter c <c> 2 +0000\n\n", false},
	{"tree " + hexA + "\n\nno author", false},
}

var hexA, hexB = strings.Repeat("a", 40), strings.Repeat("b", 40)

// parseCommit reads the layout git writes, and gives what go-git's decoder
// gives for it; the rest it leaves to go-git's.
func TestParseCommit(t *testing.T) {
	for _, tc := range commitSeeds {
		if _, ok := parseCommit([]byte(tc.data)); ok != tc.canonical {
			t.Errorf("parseCommit(%q): ok = %v, want %v", tc.data, ok, tc.canonical)
		}
		checkDecodeCommit(t, []byte(tc.data))
	}
}

func FuzzDecodeCommit(f *testing.F) {
	for _, tc := range commitSeeds {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(checkDecodeCommit)
}

// checkDecodeCommit checks that decodeCommit says of data what go-git's
// decoder says.
func checkDecodeCommit(t *testing.T, data []byte) {
	h := Hash{1}
	want, werr := object.DecodeCommit(nil, &knownObject{h: h, t: plumbing.CommitObject, data: data})
	got, err := decodeCommit(h, data)
	if (err != nil) != (werr != nil) {
		t.Fatalf("decodeCommit(%q): error %v, go-git's %v", data, err, werr)
	}
	if err != nil {
		return
	}
	w := commitRecord(want)
	sameSig := func(a, b Signature) bool {
		an, ao := a.When.Zone()
		bn, bo := b.When.Zone()
		return a.Name == b.Name && a.Email == b.Email && a.When.Equal(b.When) && an == bn && ao == bo
	}
	if got.Hash != w.Hash || got.TreeHash != w.TreeHash || !slices.Equal(got.ParentHashes, w.ParentHashes) ||
		!sameSig(got.Author, w.Author) || !sameSig(got.Committer, w.Committer) ||
		got.Message != w.Message || got.Signed != w.Signed {
		t.Fatalf("decodeCommit(%q) =\n%+v\ngo-git's:\n%+v", data, got, w)
	}
}

// Walk visits a history of merges, criss-cross ones included, in the order of
// git's pre-order walk as go-git implements it.
func TestWalkOrder(t *testing.T) {
	var stream strings.Builder
	commit := func(mark int, from int, merges ...int) {
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter c <c@example.invalid> %d +0000\ndata 2\nc\n", mark, 1000+mark)
		if from > 0 {
			fmt.Fprintf(&stream, "from :%d\n", from)
		}
		for _, m := range merges {
			fmt.Fprintf(&stream, "merge :%d\n", m)
		}
		stream.WriteString("\n")
	}
	commit(1, 0)
	commit(2, 1)
	commit(3, 1)
	commit(4, 3)
	commit(5, 2, 4)    // a merge
	commit(6, 4, 2)    // its criss-cross twin
	commit(7, 5, 6, 3) // an octopus over both
	commit(8, 7)
	dir, _ := gitImportPack(t, []byte(stream.String()))
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	var got, want []Hash
	if err := r.walkAll(head, func(c *Commit) error { got = append(got, c.Hash); return nil }); err != nil {
		t.Fatal(err)
	}
	gr, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := gr.CommitObject(gg(head))
	if err != nil {
		t.Fatal(err)
	}
	object.NewCommitPreorderIter(gc, nil, nil).ForEach(func(c *object.Commit) error {
		want = append(want, fromGG(c.Hash))
		return nil
	})
	if len(want) != 8 || !slices.Equal(got, want) {
		t.Errorf("Walk = %v\ngo-git's pre-order = %v", got, want)
	}
	var n int
	if err := r.walkAll(head, func(*Commit) error { n++; return ErrStop }); err != nil || n != 1 {
		t.Errorf("Walk stopped at once: %d commits, %v", n, err)
	}
}
