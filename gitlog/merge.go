package gitlog

import (
	"container/heap"
	"context"
)

// MergeBase returns the best common ancestor of commits a and b, or ZeroHash when
// they share no history: one that is not an ancestor of another common one.
//
// It paints commits newest first from a and from b, as git does, and stops once
// every commit left to walk lies below a common one found; so one side a commit
// ahead costs a commit or two, not the whole history, which go-git's MergeBase
// read on every sync. Equal commit times only change the order, not the answer.
// Two long unrelated histories are walked whole: the walk stops with ctx's
// error when ctx ends.
func (r *Repo) MergeBase(ctx context.Context, a, b Hash) (Hash, error) {
	if a == b {
		return a, nil
	}
	const (
		fromA = 1 << iota
		fromB
		below // under a common ancestor already found
	)
	nodes := map[Hash]*walkNode{}
	var q commitQueue
	live := 0 // queued commits not below a common ancestor
	var found []*walkNode
	mark := func(h Hash, flags uint8) error {
		n, ok := nodes[h]
		if !ok {
			c, err := r.readCommit(h)
			if err != nil {
				return err
			}
			n = &walkNode{c: c}
			nodes[h] = n
		}
		if n.flags&flags == flags {
			return nil
		}
		if n.queued && n.flags&below == 0 && flags&below != 0 {
			live--
		}
		n.flags |= flags
		if !n.queued {
			n.queued = true
			heap.Push(&q, n)
			if n.flags&below == 0 {
				live++
			}
		}
		return nil
	}
	if err := mark(a, fromA); err != nil {
		return ZeroHash, err
	}
	if err := mark(b, fromB); err != nil {
		return ZeroHash, err
	}
	for steps := 0; live > 0; steps++ {
		if steps%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return ZeroHash, err
			}
		}
		n := heap.Pop(&q).(*walkNode)
		n.queued = false
		if n.flags&below == 0 {
			live--
		}
		flags := n.flags
		if flags&(fromA|fromB) == fromA|fromB && flags&below == 0 {
			found = append(found, n)
			n.flags |= below
			flags |= below
		}
		for _, p := range n.c.ParentHashes {
			if err := mark(p, flags); err != nil {
				return ZeroHash, err
			}
		}
	}
	// With equal commit times, an older common ancestor can be met before a
	// newer one; keep those that are not below another.
	var best []*walkNode
	for _, n := range found {
		redundant := false
		for _, o := range found {
			if o != n && !redundant {
				var err error
				if redundant, err = r.isAncestor(n.c.Hash, o.c.Hash); err != nil {
					return ZeroHash, err
				}
			}
		}
		if !redundant {
			best = append(best, n)
		}
	}
	if len(best) == 0 {
		return ZeroHash, nil
	}
	return best[0].c.Hash, nil
}

// isAncestor tells whether commit a is reachable from commit b.
func (r *Repo) isAncestor(a, b Hash) (bool, error) {
	seen := map[Hash]bool{}
	for todo := []Hash{b}; len(todo) > 0; {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := r.readCommit(h)
		if err != nil {
			return false, err
		}
		todo = append(todo, c.ParentHashes...)
	}
	return false, nil
}
