package gitlog

import "fmt"

// CommitMerge applies changes to the tree of ours and commits the result on Branch
// with parents ours and theirs, as Commit does for one parent. The caller holds
// the lock and has the objects of theirs in the repository (after Fetch). The error
// wraps ErrStale if Branch no longer points at ours, ErrNotFound and ErrNotDir as
// for Commit; nothing is written then.
func (r *Repo) CommitMerge(ours, theirs Hash, changes []Change, info CommitInfo) (Hash, error) {
	if ours.IsZero() || theirs.IsZero() {
		return ZeroHash, fmt.Errorf("gitlog: merge needs two commits")
	}
	root, tree, b, err := r.buildTree(ours, changes)
	if err != nil {
		return ZeroHash, err
	}
	return r.commitTree(ours, tree, root, []Hash{ours, theirs}, info, b.objects, b.trees)
}

// MergeBase returns the best common ancestor of commits a and b, or ZeroHash when
// they share no history.
func (r *Repo) MergeBase(a, b Hash) (Hash, error) {
	ca, err := r.ReadCommit(a)
	if err != nil {
		return ZeroHash, err
	}
	cb, err := r.ReadCommit(b)
	if err != nil {
		return ZeroHash, err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return ZeroHash, fmt.Errorf("gitlog: merge base of %s and %s: %w", a, b, err)
	}
	if len(bases) == 0 {
		return ZeroHash, nil
	}
	return bases[0].Hash, nil
}
