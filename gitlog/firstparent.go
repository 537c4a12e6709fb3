package gitlog

import (
	"context"
	"errors"
	"fmt"
)

// WalkPathFirstParent is WalkPath along first parents only: it calls fn, newest
// first, for each commit on the first-parent chain from from whose tree differs
// from its first parent's at tree path p. fn returns the path to follow in older
// commits, as for WalkPath. This is the history a line-by-line attribution
// (blame) reads: each commit's change is its diff against its first parent, and
// a merge's other side is asked about separately, if at all.
func (r *Repo) WalkPathFirstParent(ctx context.Context, from Hash, p string, fn func(c *Commit, p string) (string, error)) error {
	defer r.index.flush()
	for h := from; !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.index.node(r, h)
		if err != nil {
			return fmt.Errorf("gitlog: walk: %w", err)
		}
		hit, sure := n.touches(p)
		if hit && !sure {
			if hit, err = r.entryChanged(h, n.parents, p); err != nil {
				return err
			}
		}
		if hit {
			c, err := r.ReadCommit(h)
			if err != nil {
				return err
			}
			if p, err = fn(c, p); errors.Is(err, ErrStop) {
				return nil
			} else if err != nil {
				return err
			}
		}
		if len(n.parents) == 0 {
			return nil
		}
		h = n.parents[0]
	}
	return nil
}
