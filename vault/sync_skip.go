package vault

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/gitlog"
)

// integrateSkipping is integrate for a remote whose history holds refused
// entries: one merge commit of ours and theirs, whose tree is the merge of
// ours with theirs's admissible changes. It returns the new head.
func (v *store) integrateSkipping(ctx context.Context, opts SyncOptions, base, ours, theirs gitlog.Hash, refused []Refusal, res *SyncResult) (gitlog.Hash, error) {
	baseT, err := v.repo.RootTree(base)
	if err != nil {
		return ours, fmt.Errorf("vault: sync: %w", err)
	}
	theirsT, err := v.repo.RootTree(theirs)
	if err != nil {
		return ours, fmt.Errorf("vault: sync: %w", err)
	}
	final, err := v.v.refusedInTree(ctx, theirs, theirsT, baseT)
	if err != nil {
		return ours, fmt.Errorf("vault: sync: %w", err)
	}
	clean, err := v.v.leaveOut(ctx, theirsT, baseT, final)
	if err != nil {
		return ours, err
	}
	return v.merge(ctx, opts, base, ours, theirs, clean, refused, res)
}
