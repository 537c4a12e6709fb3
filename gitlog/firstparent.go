package gitlog

import "context"

// walkPathFirstParent is walkPath along first parents only: it calls fn, newest
// first, for each commit on the first-parent chain from from whose tree differs
// from its first parent's at tree path p. fn returns the path to follow in older
// commits, as for walkPath. This is the history a line-by-line attribution
// (blame) reads: each commit's change is its diff against its first parent, and
// a merge's other side is asked about separately, if at all.
func (r *Repo) walkPathFirstParent(ctx context.Context, from Hash, p string, fn func(c *Commit, p string) (string, error)) error {
	defer r.index.flush()
	for h := from; !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, next, stop, err := r.visitPath(h, p, fn)
		if stop || err != nil {
			return err
		}
		p = next
		if len(n.parents) == 0 {
			return nil
		}
		h = n.parents[0]
	}
	return nil
}
