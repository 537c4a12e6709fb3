package gitlog

import "context"

// CommitPacked is Commit for a change of many files at once, such as an import:
// the new blobs and trees go into the repository as one pack, written and synced
// before the commit is journaled, and only the commit object goes into the journal. An
// import of ten thousand files is then one pack file to write and sync instead of
// ten thousand loose objects. Its errors are Commit's; a pack written for a commit
// that then fails (ErrStale) holds only unreferenced objects, which gc removes.
func (w *Writer) CommitPacked(ctx context.Context, parent Hash, changes []Change, info CommitInfo) (Hash, error) {
	r := w.r
	root, tree, b, err := r.buildTree(parent, changes)
	if err != nil {
		return ZeroHash, err
	}
	if err := r.packObjects(ctx, b.objects); err != nil {
		return ZeroHash, err
	}
	var parents []Hash
	if !parent.IsZero() {
		parents = []Hash{parent}
	}
	return r.commitTree(parent, tree, root, parents, info, nil, b.trees)
}
