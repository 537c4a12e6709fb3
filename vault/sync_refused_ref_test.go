package vault_test

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestRefusedFetchLeavesRemoteRef: a sync that refuses what it fetched
// leaves every ref as it was, the remote-tracking ref too. That ref used to
// move to the refused commit: status counted it as commits to take, and
// once the host took it back, the next sync said the remote had gone
// backwards, which, from what this clone took, it had not.
func TestRefusedFetchLeavesRemoteRef(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := vaulttest.PairPlain(t, url)
	write(t, a, "/memories/notes.md", "mine\n")
	mustSync(t, a)
	mustSync(t, b)

	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	good := h.Head()
	tree := h.Set(good+"^{tree}", "memories/link.md", gittest.TreeEntry{Mode: "120000", Hash: h.Blob([]byte("/etc/passwd"))})
	h.Push(h.Commit(tree, "hostile\n", good))

	before := head(t, b)
	for _, mode := range []vault.SyncMode{vault.SyncBoth, vault.SyncPull} {
		if _, err := b.Sync(ctx, vault.SyncOptions{Host: "test", Mode: mode}); !errors.Is(err, vault.ErrRefused) {
			t.Fatalf("Sync(mode %v) = %v, want ErrRefused", mode, err)
		}
		if got := head(t, b); got != before {
			t.Fatalf("head moved from %s to %s", before, got)
		}
		st, err := b.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r := st.Remotes[0]; r.Behind != 0 || r.Ahead != 0 {
			t.Errorf("status after a refused sync (mode %v): %d behind, %d ahead; want 0 and 0, as before it", mode, r.Behind, r.Ahead)
		}
	}

	// The host takes the refused commit back: the remote holds again what
	// this clone last took from it.
	h.Git("push", "-q", "-f", url, good+":refs/heads/main")
	if res := mustSync(t, b); res.WentBack {
		t.Errorf("sync after the host took back a refused commit: went back from %s to %s; want no warning", res.Seen, res.Found)
	}
}
