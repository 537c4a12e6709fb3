package vaulttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/vault"
)

// FilePath is the i-th file of a seeded vault: files are spread over directories
// of 100, as a memory tree would be.
func FilePath(i int) string { return fmt.Sprintf("/memories/d%03d/f%04d.md", i/100, i) }

// Content is about 1 KB of text, different for each i.
func Content(i int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("memory line %d about the user's project.\n", i), 24))
}

// Seed writes files files (FilePath, Content) in one commit, then overwrites them
// in turn until the vault has at least commits commits.
func Seed(tb testing.TB, v *vault.Vault, files, commits int) {
	tb.Helper()
	ctx := context.Background()
	err := v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
		for i := range files {
			if err := tx.WriteFile(ctx, FilePath(i), Content(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("seed: %v", err)
	}
	for i := 2; i < commits; i++ {
		Write(tb, v, FilePath(i%files), Content(i))
	}
}

// Write overwrites p with data as one str_replace commit.
func Write(tb testing.TB, v *vault.Vault, p string, data []byte) {
	ctx := context.Background()
	err := v.Update(ctx, vault.Meta{Command: "str_replace", ToolUseID: "toolu_seed"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, p, data)
	})
	if err != nil {
		tb.Fatalf("write %s: %v", p, err)
	}
}

// Diverge makes va and vb, two clones of one remote, diverge: commits
// writes on each, va's i-th to /memories/a/<i mod files>.md and vb's to
// /memories/b/..., each of data(side, i) ("a 1\n" when data is nil), then a
// sync of va. vb is then commits behind its remote and commits ahead of it.
func Diverge(tb testing.TB, va, vb *vault.Vault, commits, files int, data func(side string, i int) []byte) {
	tb.Helper()
	if data == nil {
		data = func(side string, i int) []byte { return fmt.Appendf(nil, "%s %d\n", side, i) }
	}
	for i := range commits {
		Write(tb, va, fmt.Sprintf("/memories/a/%d.md", i%files), data("a", i))
		Write(tb, vb, fmt.Sprintf("/memories/b/%d.md", i%files), data("b", i))
	}
	MustSync(tb, va)
}

// Naive is the baseline memvault is measured against: a git checkout of ciphertext
// files, changed by encrypting a file and running `git add` and `git commit`.
type Naive struct {
	tb  testing.TB
	dir string
	id  *age.X25519Identity
}

// NewNaive makes a checkout in dir holding files ciphertext files (FilePath,
// Content) in one commit. It skips tb when no git binary is on PATH.
func NewNaive(tb testing.TB, dir string, files int) *Naive {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git binary not on PATH")
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	n := &Naive{tb: tb, dir: dir, id: id}
	n.git("init", "-q", "-b", "main")
	// git commit may start git gc --auto; detached, it outlives the benchmark
	// and races the removal of its temporary directory. In the foreground it
	// falls inside one write's time, which the median does not see.
	n.git("config", "gc.autoDetach", "false")
	for i := range files {
		n.put(FilePath(i), Content(i))
	}
	n.git("add", "-A")
	n.git("commit", "-q", "-m", "import")
	return n
}

// For is n used by tb: a checkout made once serves every run of a benchmark.
func (n *Naive) For(tb testing.TB) *Naive { c := *n; c.tb = tb; return &c }

// Dir is the checkout.
func (n *Naive) Dir() string { return n.dir }

// Write is one naive write command: encrypt p, git add, git commit.
func (n *Naive) Write(p string, data []byte) {
	rel := n.put(p, data)
	n.git("add", rel)
	n.git("commit", "-q", "-m", "str_replace "+p)
}

// Put encrypts data to p's file in the checkout and runs no git: the part of
// Write before git, for a baseline that commits another way. It returns the
// file's path relative to the checkout.
func (n *Naive) Put(p string, data []byte) string { return n.put(p, data) }

// Git runs git in the checkout.
func (n *Naive) git(args ...string) {
	cmd := exec.Command("git", append([]string{"-C", n.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		n.tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// SetConfig sets a git config value in the checkout.
func (n *Naive) SetConfig(key, value string) { n.git("config", key, value) }

func (n *Naive) put(p string, data []byte) string {
	rel := strings.TrimPrefix(p, "/")
	full := filepath.Join(n.dir, rel)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		n.tb.Fatal(err)
	}
	f, err := os.Create(full)
	if err != nil {
		n.tb.Fatal(err)
	}
	w, err := age.Encrypt(f, n.id.Recipient())
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		n.tb.Fatal(err)
	}
	return rel
}
