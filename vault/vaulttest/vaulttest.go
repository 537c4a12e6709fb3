// Package vaulttest makes real vaults for tests: a bare repository in a temporary
// directory and a freshly generated age identity beside it.
package vaulttest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
)

// New creates a vault with its own identity in tb's temporary directory and closes
// it when the test ends.
func New(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _ := NewAt(tb, tb.TempDir())
	return v
}

// Pair makes a vault a, in the default format, that has pushed to the remote
// at url (its origin), and b, a clone of it with the same identity; b is
// closed when the test ends.
func Pair(tb testing.TB, url string) (a, b *vault.Vault, opts vault.Options) {
	tb.Helper()
	return pair(tb, url, false)
}

// PairPlain is Pair with vault a in the plain format.
func PairPlain(tb testing.TB, url string) (a, b *vault.Vault, opts vault.Options) {
	tb.Helper()
	return pair(tb, url, true)
}

// PairSealed is Pair with vault a in the sealed format, named so for a test
// about that format whatever the default.
func PairSealed(tb testing.TB, url string) (a, b *vault.Vault, opts vault.Options) {
	tb.Helper()
	return pair(tb, url, false)
}

func pair(tb testing.TB, url string, plain bool) (a, b *vault.Vault, opts vault.Options) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	a, opts = newAt(tb, dir, plain)
	if err := a.AddRemote("origin", url); err != nil {
		tb.Fatalf("AddRemote: %v", err)
	}
	if _, err := a.Sync(ctx, vault.SyncOptions{Host: "test"}); err != nil {
		tb.Fatalf("Sync: %v", err)
	}
	b, _, err := vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
	if err != nil {
		tb.Fatalf("Clone(%s): %v", url, err)
	}
	tb.Cleanup(func() { b.Close() })
	return a, b, opts
}

// NewAt creates a vault in the default format at dir/vault.git with its
// identity at dir/identity, and returns it with the options that open it again.
func NewAt(tb testing.TB, dir string) (*vault.Vault, vault.Options) {
	tb.Helper()
	return newAt(tb, dir, false)
}

// NewPlainAt is NewAt for a vault in the plain format.
func NewPlainAt(tb testing.TB, dir string) (*vault.Vault, vault.Options) {
	tb.Helper()
	return newAt(tb, dir, true)
}

// NewSealedAt is NewAt for a vault in the sealed format, named so for a test
// about that format whatever the default.
func NewSealedAt(tb testing.TB, dir string) (*vault.Vault, vault.Options) {
	tb.Helper()
	return newAt(tb, dir, false)
}

func newAt(tb testing.TB, dir string, plain bool) (*vault.Vault, vault.Options) {
	tb.Helper()
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: plain}
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		tb.Fatalf("vault.Init: %v", err)
	}
	tb.Cleanup(func() { v.Close() })
	return v, opts
}

// Log returns v's history as opts selects it, failing the test if it cannot be read:
// a "no commit was made" check that ignored Log's error would pass on a broken vault.
func Log(tb testing.TB, v *vault.Vault, opts vault.LogOptions) []vault.Record {
	tb.Helper()
	recs, err := v.Log(context.Background(), opts)
	if err != nil {
		tb.Fatalf("log: %v", err)
	}
	return recs
}

// NewClocked creates a vault whose clock reads *now, so a test can move time.
func NewClocked(tb testing.TB, now *time.Time) *vault.Vault {
	tb.Helper()
	v0, opts := NewAt(tb, tb.TempDir())
	opts.Now = func() time.Time { return *now }
	v, err := vault.Open(context.Background(), v0.Dir(), opts)
	if err != nil {
		tb.Fatalf("vault.Open: %v", err)
	}
	tb.Cleanup(func() { v.Close() })
	return v
}

// FileRemote is an empty bare repository reached by a file:// URL, in tb's
// temporary directory; it needs no git binary.
func FileRemote(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "remote.git")
	r, err := gitlog.Init(dir)
	if err != nil {
		tb.Fatal(err)
	}
	r.Close()
	return "file://" + dir
}

// MustSync syncs v with its default remote, as host "test", and fails tb on
// an error.
func MustSync(tb testing.TB, v *vault.Vault) vault.SyncResult {
	tb.Helper()
	res, err := v.Sync(context.Background(), vault.SyncOptions{Host: "test"})
	if err != nil {
		tb.Fatalf("Sync: %v", err)
	}
	return res
}

// NewFormat is New, in the sealed format when sealed is true: a test run on
// both formats names its vault once.
func NewFormat(tb testing.TB, sealed bool) *vault.Vault {
	tb.Helper()
	dir := tb.TempDir()
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"),
		vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: !sealed})
	if err != nil {
		tb.Fatalf("vault.Init(Plain: %v): %v", !sealed, err)
	}
	tb.Cleanup(func() { v.Close() })
	return v
}

// HeadMessage returns the message of the commit at v's main branch, read with
// git straight from the repository: what a host holds, not what memvault shows.
func HeadMessage(tb testing.TB, v *vault.Vault) string {
	tb.Helper()
	if err := v.Flush(context.Background()); err != nil { // for git to see its objects
		tb.Fatal(err)
	}
	out, err := exec.Command(gittest.Git(tb), "--git-dir", v.Dir(), "cat-file", "commit", "refs/heads/main").Output()
	if err != nil {
		tb.Fatal(err)
	}
	_, msg, ok := strings.Cut(string(out), "\n\n")
	if !ok {
		tb.Fatalf("git cat-file commit main: no message in %q", out)
	}
	return msg
}
