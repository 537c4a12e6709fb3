package vault_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/exchange"
	"github.com/memvault/memvault/vault/vaulttest"
)

func mustSync(t *testing.T, v *vault.Vault) exchange.SyncResult { return vaulttest.MustSync(t, v) }

// The helpers of the sync tests (vault/exchange), for the admission tests that sync.

func pair(t *testing.T, url string) (a, b *vault.Vault) {
	t.Helper()
	dir := t.TempDir()
	a, opts := vaulttest.NewAt(t, dir)
	if err := exchange.AddRemote(a, "origin", url); err != nil {
		t.Fatalf("AddRemote: %v", err)
	}
	mustSync(t, a)
	b, _, err := exchange.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, exchange.CloneOptions{})
	if err != nil {
		t.Fatalf("Clone(%s): %v", url, err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

// clock is a fake time for commits: each reading is step after the last, so a
// run repeats exactly. Below a second, many commits share a second (git's unit),
// as when an agent writes quickly.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newClock(step time.Duration) *clock {
	return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: step}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// pairAt is pair with commit times from c.
func pairAt(t *testing.T, url string, c *clock) (a, b *vault.Vault) {
	t.Helper()
	dir := t.TempDir()
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Now: c.now}
	a, _, err := vault.Init(ctx, filepath.Join(dir, "a.git"), opts)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if err := exchange.AddRemote(a, "origin", url); err != nil {
		t.Fatalf("AddRemote: %v", err)
	}
	mustSync(t, a)
	if b, _, err = exchange.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, exchange.CloneOptions{}); err != nil {
		t.Fatalf("Clone(%s): %v", url, err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

func head(t *testing.T, v *vault.Vault) string {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s.Commit()
}

func rename(t *testing.T, v *vault.Vault, from, to string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "rename"}, func(tx *vault.Tx) error { return tx.Rename(from, to) })
	if err != nil {
		t.Fatalf("rename %s: %v", from, err)
	}
}

func remove(t *testing.T, v *vault.Vault, p string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "delete"}, func(tx *vault.Tx) error { return tx.Remove(p) })
	if err != nil {
		t.Fatalf("delete %s: %v", p, err)
	}
}

// TestSyncTransports runs a push, a fast-forward and a clean merge through each
// transport against a real server on loopback.

// headMessage returns the message of the commit at v's main branch, read with
// git straight from the repository.
func headMessage(t *testing.T, v *vault.Vault) string {
	t.Helper()
	if err := v.Flush(context.Background()); err != nil { // for git to see its objects
		t.Fatal(err)
	}
	out, err := exec.Command(gittest.Git(t), "--git-dir", v.Dir(), "cat-file", "commit", "refs/heads/main").Output()
	if err != nil {
		t.Fatal(err)
	}
	_, msg, ok := strings.Cut(string(out), "\n\n")
	if !ok {
		t.Fatalf("git cat-file commit main: no message in %q", out)
	}
	return msg
}
