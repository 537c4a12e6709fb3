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
	labels, err := v.mergeLabels(opts, ours, theirs)
	if err != nil {
		return ours, err
	}
	changes, conflicts, aside, err := v.planMergeAs(ctx, base, ours, theirs, clean, labels)
	if err != nil {
		return ours, err
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return ours, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	info, err := v.mergeInfo(opts.Remote, conflicts, ours, theirs)
	if err != nil {
		return ours, err
	}
	info.Message = withLeftOut(info.Message, refused)
	h, err := v.commitIntegration(w, base, ours, theirs, changes, info)
	if err != nil {
		return ours, err
	}
	res.Action, res.Conflicts, res.MovedAside, res.LeftOut = "merge", conflicts, aside, refused
	return h, nil
}
