package vault_test

import (
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/exchange"
	"github.com/memvault/memvault/vault/vaulttest"
)

func mustSync(t *testing.T, v *vault.Vault) exchange.SyncResult { return vaulttest.MustSync(t, v) }

// The helpers of the sync tests (vault/exchange), for the admission tests that sync.

func pair(t *testing.T, url string) (a, b *vault.Vault) {
	t.Helper()
	a, b, _ = vaulttest.Pair(t, url)
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
