package vault_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestContractOnVault runs the memory tool's conformance suite through a
// Handler on real vaults: the plain format, the sealed one, and each in review
// mode, where every answer is the same, byte for byte, each write is one
// pending change and main does not move. agent's own run uses a store held in
// memory; this one proves the vault keeps the contract.
//
// The sealed format answers otherwise for names over 143 bytes
// (agenttest.SealedDiffers): it stores a path component in at most 255 bytes,
// so a longer name is an invalid path there (agent's TestSealedLongName).
func TestContractOnVault(t *testing.T) {
	for _, review := range []bool{false, true} {
		for _, sealed := range []bool{false, true} {
			name, newAt, differs := "plain", vaulttest.NewPlainAt, map[string]string(nil)
			if sealed {
				name, newAt, differs = "sealed", vaulttest.NewSealedAt, agenttest.SealedDiffers
			}
			if review {
				name = "review/" + name
			}
			t.Run(name, func(t *testing.T) {
				template := t.TempDir()
				if v, _ := newAt(t, template); v.Close() != nil {
					t.Fatal("close the template vault")
				}
				agenttest.RunExcept(t, func(t *testing.T) agenttest.Target {
					return contractTarget(t, copyVault(t, template), review)
				}, differs)
			})
		}
	}
}

// contractTarget is the contract's Target on v, through a Handler on v itself
// or, in review mode, on its agent store.
func contractTarget(t *testing.T, v *vault.Vault, review bool) agenttest.Target {
	ctx := context.Background()
	var store agent.VaultStore = v
	log := func() ([]vault.Record, error) { return v.Log(ctx, vault.LogOptions{}) }
	if review {
		store = v.Agent(vault.AgentOptions{Review: true})
		log = func() ([]vault.Record, error) { return pendingLog(v) }
		head, err := v.Head()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if now, _ := v.Head(); now != head {
				t.Errorf("main moved in review mode")
			}
		})
	}
	h := agent.New(agent.Vault(store), agent.Options{})
	return agenttest.Target{
		Do: func(input, toolUseID string) (string, bool) {
			a, err := h.Run(ctx, []byte(input), toolUseID)
			if err != nil {
				t.Fatalf("Run(%.200q) error: %v", input, err)
			}
			return a.Content, a.IsError
		},
		Log: log,
	}
}

// pendingLog is the review line's changes as a history, newest first: what
// an agent in review mode commits.
func pendingLog(v *vault.Vault) ([]vault.Record, error) {
	ps, err := v.Review(context.Background(), vault.ReviewOptions{})
	if err != nil {
		return nil, err
	}
	recs := make([]vault.Record, len(ps))
	for i, p := range ps {
		recs[len(ps)-1-i] = p.Record
	}
	return recs, nil
}

// copyVault opens a copy of the vault and identity that a vaulttest
// constructor made in dir: a fresh vault for the price of a copy.
func copyVault(t *testing.T, dir string) *vault.Vault {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(context.Background(), filepath.Join(to, "vault.git"), vault.Options{IdentityFile: filepath.Join(to, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}
