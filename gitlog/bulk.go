package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// CommitPacked is Commit for a change of many files at once, such as an import:
// the new blobs and trees go into the repository as one pack, written and synced
// before the commit is journaled, and only the commit object is written loose. An
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

// packObjects writes objs, once each, as one new pack.
func (r *Repo) packObjects(ctx context.Context, objs []rawObject) error {
	byHash := make(map[Hash]rawObject, len(objs))
	hs := make([]Hash, 0, len(objs))
	for _, o := range objs {
		if _, dup := byHash[o.hash]; !dup {
			byHash[o.hash] = o
			hs = append(hs, o.hash)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	read := func(_ plumbing.ObjectType, h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
		o := byHash[h]
		return o.typ, int64(len(o.data)), io.NopCloser(bytes.NewReader(o.data)), nil
	}
	sink, err := r.newPackSink()
	if err != nil {
		return err
	}
	if err := writePack(contextWriter{ctx, sink}, hs, read); err != nil {
		sink.abort()
		return fmt.Errorf("gitlog: pack: %w", err)
	}
	return sink.Close()
}
