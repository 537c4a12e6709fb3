package memstore_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoSDKDeps: the vault's side of a memory store's sync builds no
// Anthropic SDK in; the client that speaks the API is agent/memstoreapi's.
// vault/memstore once imported the SDK itself, and every program built on
// vault with it.
func TestNoSDKDeps(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("skipped: no go binary on PATH to list vault's dependencies")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/memvault/memvault/vault/...").Output()
	if err != nil {
		t.Fatalf("go list -deps vault/...: %v", err)
	}
	deps := strings.Fields(string(out))
	const sdk = "github.com/anthropics/anthropic-sdk-go"
	found := false
	for _, d := range deps {
		found = found || d == "github.com/memvault/memvault/vault/memstore"
		if d == sdk || strings.HasPrefix(d, sdk+"/") {
			t.Errorf("vault/... depends on %s; only agent/claude, agent/memstoreapi and cmd may", d)
		}
	}
	if !found {
		t.Fatalf("go list -deps vault/... lists %d packages and not vault/memstore: not the list of vault's dependencies", len(deps))
	}
}
