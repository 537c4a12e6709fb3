package gitlog

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// gitImportPack makes a bare repository with the git binary from a
// fast-import stream, repacked into one pack with git repack -adfq and the
// options given. It returns the repository and the pack's path.
func gitImportPack(tb testing.TB, stream []byte, repack ...string) (dir, pack string) {
	tb.Helper()
	git := gittest.Git(tb)
	dir = tb.TempDir()
	run := func(stdin []byte, args ...string) {
		tb.Helper()
		cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(nil, "init", "-q", "--bare")
	run(stream, "fast-import", "--quiet")
	run(nil, append([]string{"repack", "-adfq"}, repack...)...)
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		tb.Fatalf("packs: %v", packs)
	}
	return dir, packs[0]
}
