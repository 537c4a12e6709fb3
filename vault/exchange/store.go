// Package exchange moves a vault's history to and from other clones through git
// remotes: Sync fetches, admits what arrived (see vault's admission rules),
// fast-forwards or merges on plaintext, and pushes; Clone makes a new vault
// from a remote; AddRemote, RemoveRemote and Remotes keep the list of remotes.
// It works on an open *vault.Vault with the few internals package vault lends
// it through vault/internal/storehook.
package exchange

import (
	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/internal/storehook"
)

// lent is what package vault lends; its init, which runs before this
// package's, fills it in.
var lent = storehook.Lent.(*storehook.Store[vault.Vault, vault.Options, vault.Refusal])

// store is a vault as a sync works on it: the vault and its repository.
type store struct {
	v    *vault.Vault
	repo *gitlog.Repo
}

func storeOf(v *vault.Vault) *store { return &store{v: v, repo: lent.Repo(v)} }
