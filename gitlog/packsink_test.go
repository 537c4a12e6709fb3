package gitlog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// gitObject is an object of a repository git made, read back with git.
type gitObject struct {
	hash Hash
	typ  plumbing.ObjectType
	data []byte
}

// gitFoldersPack makes, with the git binary, a pack of commits that each edit
// one of 40 files in 4 folders, repacked so that trees and commits are
// whole objects and deltas. It returns the pack and every object in it, as
// git's cat-file reads them.
func gitFoldersPack(tb testing.TB) ([]byte, []gitObject) {
	tb.Helper()
	git := gittest.Git(tb)
	dir := tb.TempDir()
	run := func(stdin []byte, args ...string) []byte {
		tb.Helper()
		cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return out
	}
	run(nil, "init", "-q", "--bare")
	var stream bytes.Buffer
	for k := range 120 {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter a <a@example.invalid> %d +0000\ndata 6\nedit %d\n", 1700000000+k, k%10)
		text := fmt.Sprintf("version %d of a note\n", k)
		fmt.Fprintf(&stream, "M 100644 inline m/folder%d/note%02d.md\ndata %d\n%s\n", k%4, k%40, len(text), text)
	}
	run(stream.Bytes(), "fast-import", "--quiet")
	run(nil, "repack", "-adfq", "--depth=50", "--window=50")
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		tb.Fatalf("packs: %v", packs)
	}
	if !regexp.MustCompile(`(?m) tree +\d+ \d+ \d+ \d+ [0-9a-f]{40}$`).Match(run(nil, "verify-pack", "-v", packs[0])) {
		tb.Fatalf("git's pack holds no tree stored as a delta")
	}
	pack, err := os.ReadFile(packs[0])
	if err != nil {
		tb.Fatal(err)
	}
	var objs []gitObject
	out := bufio.NewReader(bytes.NewReader(run(nil, "cat-file", "--batch-all-objects", "--batch")))
	for {
		line, err := out.ReadString('\n')
		if err == io.EOF {
			break
		}
		f := strings.Fields(line)
		if err != nil || len(f) != 3 {
			tb.Fatalf("cat-file: %q, %v", line, err)
		}
		h, _ := ParseHash(f[0])
		typ, _ := plumbing.ParseObjectType(f[1])
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1) // and the newline after it
		if _, err := io.ReadFull(out, data); err != nil {
			tb.Fatal(err)
		}
		objs = append(objs, gitObject{h, typ, data[:n]})
	}
	return pack, objs
}

// TestReceivedPackSeedsPackReads: a pack received from a remote leaves its
// commits and trees (whole, and made from deltas) resolved in the pack
// reader, each as git reads it, so that the reads after a fetch do not
// inflate them again; its blobs are not kept.
func TestReceivedPackSeedsPackReads(t *testing.T) {
	pack, objs := gitFoldersPack(t)
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.newPackSink(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(pack); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r.packs.mu.Lock()
	defer r.packs.mu.Unlock()
	r.packs.relist()
	kept := map[plumbing.ObjectType]int{}
	for _, o := range objs {
		p, off, ok := r.packs.find(o.hash)
		if !ok {
			t.Fatalf("%v %s: in no pack after it was received", o.typ, o.hash)
		}
		c, ok := r.packs.cache[cacheKey{p, off}]
		switch {
		case o.typ == plumbing.BlobObject && ok:
			t.Errorf("blob %s: kept by the pack reader", o.hash)
		case o.typ == plumbing.BlobObject:
		case !ok:
			t.Errorf("%v %s: not kept by the pack reader", o.typ, o.hash)
		case c.t != o.typ || !bytes.Equal(c.data, o.data):
			t.Errorf("%v %s: kept as %v %q, git reads %q", o.typ, o.hash, c.t, c.data, o.data)
		default:
			kept[o.typ]++
		}
	}
	if kept[plumbing.CommitObject] != 120 || kept[plumbing.TreeObject] < 120 {
		t.Errorf("kept %d commits and %d trees, want 120 and at least 120", kept[plumbing.CommitObject], kept[plumbing.TreeObject])
	}
}

// TestIndexPackSeedsWithinBudget: the commits and trees indexPack keeps for
// the pack reader stay within the bytes it is given, and each is named by
// its content.
func TestIndexPackSeedsWithinBudget(t *testing.T) {
	pack, _ := gitFoldersPack(t)
	for _, budget := range []int64{0, 1, 2000, 1 << 20} {
		x := newPackIndexer(deltaCacheBudget)
		x.seedLeft = budget
		idx, _, err := x.index(context.Background(), bytes.NewReader(pack))
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, o := range x.seeds {
			total += int64(len(o.data))
			h := computeHash(o.t, o.data)
			if off, err := idx.FindOffset(gg(h)); err != nil || off != o.off {
				t.Errorf("budget %d: a kept %v at %d is named %s, which the index puts at %d (%v)", budget, o.t, o.off, h, off, err)
			}
		}
		if total > budget {
			t.Errorf("budget %d: kept %d bytes", budget, total)
		}
		if budget >= 2000 && len(x.seeds) == 0 {
			t.Errorf("budget %d: kept nothing", budget)
		}
	}
}
