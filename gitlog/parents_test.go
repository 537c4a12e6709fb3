package gitlog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	m, err := wl.CommitMerge(hs[4], hs[1], nil, CommitInfo{Message: "merge\n", Author: sig(), Committer: sig()})
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
			r.commits = newObjCache[*object.Commit](16) // Parents must not lean on what ReadCommit decoded
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
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
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
