package pack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestIndexPackMatchesGit checks IndexPack against git's own index of a pack
// full of deltas (git repack of many versions of a file and their trees):
// every object at the same offset, with the same name and CRC.
func TestIndexPackMatchesGit(t *testing.T) {
	git := gittest.Git(t)
	dir := t.TempDir()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "init", "-q")
	var text strings.Builder
	for i := range 30 {
		for j := range 40 {
			text.WriteString(strings.Repeat("line ", j%7+1) + "\n")
		}
		text.WriteString("version " + strings.Repeat("x", i) + "\n")
		if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		run("", "add", "notes.md")
		run("", "commit", "-q", "-m", "v")
	}
	run("", "repack", "-adfq", "--depth=50", "--window=50")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	if out := run("", "verify-pack", "-v", packs[0]); !strings.Contains(out, "chain length = ") {
		t.Fatalf("git's pack holds no deltas:\n%s", out)
	}
	f, err := os.Open(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _, err := IndexPack(context.Background(), f)
	if err != nil {
		t.Fatalf("indexPack: %v", err)
	}
	idxf, err := os.Open(strings.TrimSuffix(packs[0], ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	defer idxf.Close()
	want := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(idxf).Decode(want); err != nil {
		t.Fatal(err)
	}
	wn, _ := want.Count()
	gn, _ := got.Count()
	if gn != wn || wn < 80 {
		t.Fatalf("IndexPack named %d objects, git %d", gn, wn)
	}
	entries, err := want.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := entries.Next()
		if err != nil {
			break
		}
		off, err := got.FindOffset(e.Hash)
		if err != nil || uint64(off) != e.Offset {
			t.Errorf("object %s: IndexPack offset %d, %v; git %d", e.Hash, off, err, e.Offset)
		}
		if crc, err := got.FindCRC32(e.Hash); err != nil || crc != e.CRC32 {
			t.Errorf("object %s: IndexPack CRC %x, %v; git %x", e.Hash, crc, err, e.CRC32)
		}
	}
}
