// Package vaulttest makes real vaults for tests: a bare repository in a temporary
// directory and a freshly generated age identity beside it.
package vaulttest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/vault"
)

// New creates a vault with its own identity in tb's temporary directory and closes
// it when the test ends.
func New(tb testing.TB) *vault.Vault {
	tb.Helper()
	v, _ := NewAt(tb, tb.TempDir())
	return v
}

// NewAt creates a vault at dir/vault.git with its identity at dir/identity, and
// returns it with the options that open it again.
func NewAt(tb testing.TB, dir string) (*vault.Vault, vault.Options) {
	tb.Helper()
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		tb.Fatalf("vault.Init: %v", err)
	}
	tb.Cleanup(func() { v.Close() })
	return v, opts
}
