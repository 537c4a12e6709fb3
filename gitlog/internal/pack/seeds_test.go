package pack

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/gitlog/internal/object"
)

// gitFoldersPack makes, with the git binary, a pack of 120 commits that each
// edit one of 40 files in 4 folders, repacked so that trees are whole objects
// and deltas. It returns the pack and its commits and trees as git's cat-file
// reads them.
func gitFoldersPack(t *testing.T) ([]byte, []object.Object) {
	t.Helper()
	var stream bytes.Buffer
	for k := range 120 {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter a <a@example.invalid> %d +0000\ndata 6\nedit %d\n", 1700000000+k, k%10)
		text := fmt.Sprintf("version %d of a note\n", k)
		fmt.Fprintf(&stream, "M 100644 inline m/folder%d/note%02d.md\ndata %d\n%s\n", k%4, k%40, len(text), text)
	}
	dir, path := gitImportPack(t, stream.Bytes(), "--depth=50", "--window=50")
	typ, delta := gitObjects(t, dir)
	var objs []object.Object
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
		objs = append(objs, object.Object{Type: pt, Hash: h, Data: data})
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

// gitObjects lists the objects of the repository at dir as git's cat-file
// finds them: type and whether git stores it as a delta.
func gitObjects(t *testing.T, dir string) (typ map[Hash]string, delta map[Hash]bool) {
	t.Helper()
	out, err := exec.Command(gittest.Git(t), "--git-dir", dir, "cat-file", "--batch-all-objects",
		"--batch-check=%(objectname) %(objecttype) %(deltabase)").Output()
	if err != nil {
		t.Fatal(err)
	}
	typ, delta = map[Hash]string{}, map[Hash]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		h, err := object.Parse(f[0])
		if err != nil {
			t.Fatal(err)
		}
		typ[h] = f[1]
		delta[h] = strings.Trim(f[2], "0") != ""
	}
	return typ, delta
}

// TestIndexPackSeedsWithinBudget: the commits and trees IndexPack keeps for
// the pack reader stay within the bytes it is given, and each is named by
// its content.
func TestIndexPackSeedsWithinBudget(t *testing.T) {
	packed, _ := gitFoldersPack(t)
	for _, budget := range []int64{0, 1, 2000, 1 << 20} {
		x := NewIndexer(DeltaCacheBudget)
		x.seedLeft = budget
		idx, _, err := x.Index(context.Background(), bytes.NewReader(packed))
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, o := range x.seeds {
			total += int64(len(o.Data))
			h := computeHash(o.Type, o.Data)
			if off, err := idx.FindOffset(gg(h)); err != nil || off != o.Off {
				t.Errorf("budget %d: a kept %v at %d is named %s, which the index puts at %d (%v)", budget, o.Type, o.Off, h, off, err)
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
