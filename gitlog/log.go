package gitlog

import (
	"context"
	"errors"
	"fmt"
)

// WalkOptions choose the commits a Walk visits.
type WalkOptions struct {
	// Path, when set, limits the walk to the commits whose tree differs from
	// their first parent's (a root commit's: from the empty tree) at this tree
	// path: the file there, or anything under the directory. fn is given the
	// path and returns the one to follow in older commits: the same, or
	// another where the content came from elsewhere (a rename). The walk
	// reads only the commits it hands to fn: it learns the others' parents and
	// changed paths from the history index (see index.go), which it completes
	// for commits made elsewhere on the way.
	Path string
	// FirstParent follows first parents only, newest first: the history a
	// line-by-line attribution (blame) reads, where each commit's change is its
	// diff against its first parent.
	FirstParent bool
}

// Walk calls fn for from and each of its ancestors, each once, in pre-order,
// first parent first (git's and go-git's pre-order walk): a commit comes before
// the parents it leads to, but with merges a commit reached down one parent's
// line may come before a child on another line. opts narrow the walk to first
// parents, or to the commits that change a path, which fn is given (without a
// path, fn is given "" and what it returns is not used). Walk goes on until fn
// returns ErrStop or an error, which Walk returns unless it is ErrStop, or
// until ctx ends, whose error it returns.
func (r *Repo) Walk(ctx context.Context, from Hash, opts WalkOptions, fn func(c *Commit, p string) (string, error)) error {
	switch {
	case opts.Path != "" && opts.FirstParent:
		return r.walkPathFirstParent(ctx, from, opts.Path, fn)
	case opts.Path != "":
		return r.walkPath(ctx, from, opts.Path, fn)
	}
	visit := func(c *Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := fn(c, "")
		return err
	}
	if opts.FirstParent {
		return r.walkFirstParent(from, visit)
	}
	return r.walkAll(from, visit)
}

// walkFirstParent calls fn for from and its first parents, newest first,
// as walkAll does for all its ancestors.
func (r *Repo) walkFirstParent(from Hash, fn func(*Commit) error) error {
	for h := from; !h.IsZero(); {
		c, err := r.readCommit(h)
		if err != nil {
			return fmt.Errorf("gitlog: walk: %w", err)
		}
		if err := fn(c.clone()); errors.Is(err, ErrStop) {
			return nil
		} else if err != nil {
			return fmt.Errorf("gitlog: walk: %w", err)
		}
		h = firstOf(c.ParentHashes)
	}
	return nil
}

// walkAll calls fn for from and each of its ancestors, each once, in pre-order,
// first parent first (git's and go-git's pre-order walk): a commit comes before
// the parents it leads to, but with merges a commit reached down one parent's
// line may come before a child on another line. It goes on until fn returns
// ErrStop or an error, which walkAll returns unless it is ErrStop.
func (r *Repo) walkAll(from Hash, fn func(*Commit) error) error {
	if from.IsZero() {
		return nil
	}
	// A stack of the parents each commit on the way down has left to
	// walk, as git's pre-order walk keeps: a parent is dropped when it is
	// put on the stack if seen by then, and when it is taken if seen since.
	seen := map[Hash]bool{}
	stack := [][]Hash{{from}}
	for len(stack) > 0 {
		top := len(stack) - 1
		if len(stack[top]) == 0 {
			stack = stack[:top]
			continue
		}
		h := stack[top][0]
		stack[top] = stack[top][1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := r.readCommit(h)
		if err != nil {
			return fmt.Errorf("gitlog: walk: %w", err)
		}
		var left []Hash
		for _, p := range c.ParentHashes {
			if !seen[p] {
				left = append(left, p)
			}
		}
		if len(left) > 0 {
			stack = append(stack, left)
		}
		if err := fn(c.clone()); errors.Is(err, ErrStop) {
			return nil
		} else if err != nil {
			return fmt.Errorf("gitlog: walk: %w", err)
		}
	}
	return nil
}

// walkPath calls fn, in walkAll's order, for each commit reachable from from whose
// tree differs from its first parent's (a root commit's: from the empty tree) at
// tree path p: the file there, or anything under the directory. fn returns the
// path to follow in the older commits: p itself, or another where the content came
// from elsewhere (a rename). It returns fn's error unless that is ErrStop, and
// ctx's error if ctx ends first.
//
// walkPath reads only the commits it hands to fn: it learns the others' parents
// and changed paths from the history index (see index.go), which it completes
// for commits made elsewhere on the way.
func (r *Repo) walkPath(ctx context.Context, from Hash, p string, fn func(c *Commit, p string) (string, error)) error {
	if from.IsZero() {
		return nil
	}
	defer r.index.flush()
	stack := []Hash{from}
	// A commit can be met twice only below a merge: until the first merge, the
	// walk is a chain, and nothing it passed can be met again.
	var seen map[Hash]bool
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen != nil {
			if seen[h] {
				continue
			}
			seen[h] = true
		}
		n, next, stop, err := r.visitPath(h, p, fn)
		if stop || err != nil {
			return err
		}
		p = next
		if len(n.parents) > 1 && seen == nil {
			seen = map[Hash]bool{h: true}
		}
		for i := len(n.parents) - 1; i >= 0; i-- {
			if !seen[n.parents[i]] {
				stack = append(stack, n.parents[i])
			}
		}
	}
	return nil
}

// Changed tells whether commit h's tree holds another entry at tree path p
// than its first parent's (any entry, for a commit with no parent), from the
// history index when it knows: that reads no commit but h, at most, where
// comparing the trees would read the parent's.
func (r *Repo) Changed(h Hash, p string) (bool, error) {
	n, err := r.index.node(r, h)
	if err != nil {
		return false, fmt.Errorf("gitlog: changed: %w", err)
	}
	hit, sure := n.touches(p)
	if hit && !sure {
		return r.entryChanged(h, n.parents, p)
	}
	return hit, nil
}

// entryChanged tells whether commit h's tree and its first parent's hold different
// entries at tree path p.
func (r *Repo) entryChanged(h Hash, parents []Hash, p string) (bool, error) {
	at := func(c Hash) (Hash, error) {
		root, err := r.RootTree(c)
		if err != nil || root.IsZero() {
			return ZeroHash, err
		}
		e, err := r.Lookup(root, p)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotDir) {
			return ZeroHash, nil
		}
		return e.Hash, err
	}
	mine, err := at(h)
	if err != nil {
		return false, err
	}
	var theirs Hash
	if len(parents) > 0 {
		if theirs, err = at(parents[0]); err != nil {
			return false, err
		}
	}
	return mine != theirs, nil
}

// visitPath reads commit h's index node and, when h changed path p, calls fn
// with it; it returns the node, the path to follow below h, and stop when fn
// asked the walk to end.
func (r *Repo) visitPath(h Hash, p string, fn func(c *Commit, p string) (string, error)) (n *ixNode, next string, stop bool, err error) {
	if n, err = r.index.node(r, h); err != nil {
		return nil, p, false, fmt.Errorf("gitlog: walk: %w", err)
	}
	hit, sure := n.touches(p)
	if hit && !sure {
		if hit, err = r.entryChanged(h, n.parents, p); err != nil {
			return nil, p, false, err
		}
	}
	if !hit {
		return n, p, false, nil
	}
	c, err := r.ReadCommit(h)
	if err != nil {
		return nil, p, false, err
	}
	if p, err = fn(c, p); errors.Is(err, ErrStop) {
		return n, p, true, nil
	}
	return n, p, false, err
}
