package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// gitFoldersPack makes, with the git binary, a pack of 120 commits that each
// edit one of 40 files in 4 folders, repacked so that trees are whole objects
// and deltas. It returns the pack and its commits and trees as git's cat-file
// reads them.
func gitFoldersPack(t *testing.T) ([]byte, []rawObject) {
	t.Helper()
	var stream bytes.Buffer
	for k := range 120 {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter a <a@example.invalid> %d +0000\ndata 6\nedit %d\n", 1700000000+k, k%10)
		text := fmt.Sprintf("version %d of a note\n", k)
		fmt.Fprintf(&stream, "M 100644 inline m/folder%d/note%02d.md\ndata %d\n%s\n", k%4, k%40, len(text), text)
	}
	dir, path := gitImportPack(t, stream.Bytes(), "--depth=50", "--window=50")
	typ, delta := gitObjects(t, dir)
	var objs []rawObject
	treeDeltas := 0
	for h, ty := range typ {
		if ty != "commit" && ty != "tree" {
			continue
		}
		data, err := exec.Command(gittest.Git(t), "--git-dir", dir, "cat-file", ty, h.String()).Output()
		if err != nil {
			t.Fatal(err)
		}
		pt, _ := plumbing.ParseObjectType(ty)
		objs = append(objs, rawObject{Type: pt, Hash: h, Data: data})
		if ty == "tree" && delta[h] {
			treeDeltas++
		}
	}
	if treeDeltas == 0 {
		t.Fatal("git's pack holds no tree stored as a delta")
	}
	pack, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return pack, objs
}

// checkSeeded checks that r's pack reader holds each commit and tree of objs
// resolved as its content, and none of its blobs; each must be in r's packs.
func checkSeeded(t *testing.T, r *Repo, objs []rawObject) {
	t.Helper()
	for _, o := range objs {
		typ, data, kept := r.packs.Cached(o.Hash)
		switch {
		case o.Type == plumbing.BlobObject && kept:
			t.Errorf("blob %s: kept by the pack reader", o.Hash)
		case o.Type != plumbing.BlobObject && (!kept || typ != o.Type || !bytes.Equal(data, o.Data)):
			t.Errorf("%v %s: kept %v as %v %q, want %q", o.Type, o.Hash, kept, typ, data, o.Data)
		}
	}
}

// TestReceivedPackSeedsPackReads: a pack received from a remote leaves its
// commits and trees (whole, and made from deltas) resolved in the pack
// reader, each as git reads it, so that the reads after a fetch do not
// inflate them again.
func TestReceivedPackSeedsPackReads(t *testing.T) {
	packed, objs := gitFoldersPack(t)
	if len(objs) < 240 {
		t.Fatalf("git's pack holds %d commits and trees, want 120 commits and more trees", len(objs))
	}
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.newPackSink(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(packed); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkSeeded(t, r, objs)
}
