//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// rssChild runs memvault as a child process (this test binary, linked under
// the name memvault) in a home of its own, and measures each run's peak
// resident size from outside, as getrusage sees it.
type rssChild struct {
	t    *testing.T
	root string // the home; the identity is root/identity
	exe  string
}

func newRSSChild(t *testing.T) *rssChild {
	root := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(root, "memvault")
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	return &rssChild{t: t, root: root, exe: exe}
}

// run runs memvault args on the vault at dir with stdin, and returns what it
// printed, its exit status and its peak RSS in bytes.
func (c *rssChild) run(dir, stdin string, args ...string) (out string, code int, rss int64) {
	c.t.Helper()
	cmd := exec.Command(c.exe, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.root,
		"MEMVAULT_DIR=" + dir, "MEMVAULT_IDENTITY=" + filepath.Join(c.root, "identity")}
	cmd.Stdin = strings.NewReader(stdin)
	var o bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &o
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		c.t.Fatalf("memvault %s: %v", strings.Join(args, " "), err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return o.String(), cmd.ProcessState.ExitCode(), ru.Maxrss << 10 // KiB on Linux
}

// git runs git and returns its output, trimmed.
func (c *rssChild) git(args ...string) string {
	c.t.Helper()
	out, err := exec.Command(gittest.Git(c.t), args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
