package vault

import (
	"context"
	"fmt"

	"filippo.io/age"
	"github.com/memvault/memvault/gitlog"
)

// store is a vault as a sync, merge or clone works on it: the vault and its
// repository.
type store struct {
	v    *Vault
	repo *gitlog.Repo
}

func storeOf(v *Vault) *store { return &store{v: v, repo: v.repo} }

// admitArrived checks every commit from base to theirs that a fetch brought,
// against the writers this clone holds (admit.go, trust.go).
func (v *Vault) admitArrived(ctx context.Context, base, theirs gitlog.Hash, acceptRemoved bool) ([]Refusal, error) {
	held, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: admit: %w", err)
	}
	return admit(ctx, v.repo, v.limits, v.admitKey(theirs), base, theirs,
		trustRules{held: held, acceptRemoved: acceptRemoved})
}

// admitClone checks the history a clone has just fetched into repo, before it
// is a vault: a sealed tree's key is opened with the identity the clone will
// read with, and each first commit must be below one a pinned writer signed
// (none pinned: trust on first use).
func admitClone(ctx context.Context, repo *gitlog.Repo, opts Options, theirs gitlog.Hash, pinned []string) ([]Refusal, error) {
	limits := readLimits(repo)
	repo.SetBlobLimit(blobLimit(limits))
	keysOnly := &Vault{repo: repo, opts: opts, limits: limits, keys: newKeyring(opts, repo)}
	return admit(ctx, repo, limits, keysOnly.admitKey(theirs), gitlog.ZeroHash, theirs,
		trustRules{pinned: pinned})
}

// refusedInTree checks commit c's tree against the tree base.
func (v *Vault) refusedInTree(ctx context.Context, c, tree, base gitlog.Hash) ([]Refusal, error) {
	return refusedIn(ctx, v.repo, v.limits, v.admitKey(c), c, tree, base)
}

// recipientsAt returns commit c's recipients file.
func (v *Vault) recipientsAt(c gitlog.Hash) ([]byte, error) {
	s, err := v.snapshotAt(c)
	if err != nil {
		return nil, err
	}
	return s.recipientsContent()
}

// parseRecipients parses a recipients file for encrypt; the error wraps
// ErrRecipients.
func (v *Vault) parseRecipients(content []byte) ([]age.Recipient, error) {
	return v.keys.parseRecipients(content)
}

// trailerValues reads back from msg the value of the last trailer named each
// key ("" for none).
func trailerValues(msg string, keys ...string) []string {
	_, ts := parseMessage(msg)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = trailerValue(ts, k)
	}
	return out
}
