package vault_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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

func head(t *testing.T, v *vault.Vault) string {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s.Commit()
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
