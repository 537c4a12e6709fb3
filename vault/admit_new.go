package vault

import (
	"container/heap"
	"context"

	"github.com/memvault/memvault/gitlog"
)

// newCommits returns the commits reachable from head and not from base, each
// after its parents: what git's rev-list head ^base lists. Admission judges
// these and only these, and a merge replays their renames.
//
// Asking for a merge base once per arriving commit made a fast-forward over
// another clone's merge cost the square of the history (each base walk read
// the whole other side). Like rev-list, this walks newest first from head and
// from base at once, painting what base reaches, and stops once everything
// left to walk is reached from base: it reads the new commits and about as
// many below base.
//
// The paint never calls new a commit base reaches by a path it walked, but a
// commit time out of order (a clock skew, or a host that writes any time it
// likes) can stop the walk before base's paint reaches a commit it does reach:
// such a commit would be listed as new, and judged as though it had just
// arrived. Those commits are closed under ancestry, so each one listed whose
// parents are none of them is checked against base itself (gitlog's merge
// base, which walks until it knows); a commit with a parent found new is new.
// An honest history has one such commit per line of work that branched off
// below base.
func newCommits(ctx context.Context, repo *gitlog.Repo, base, head gitlog.Hash) ([]*gitlog.Commit, error) {
	nodes := map[gitlog.Hash]*sideNode{}
	var q sideQueue
	live := 0 // queued nodes the base does not reach (yet)
	mark := func(h gitlog.Hash, below bool) error {
		if n, ok := nodes[h]; ok {
			if below && !n.below {
				n.below = true
				if n.queued {
					live--
				} else {
					n.queued = true // walked as new: take the base's paint to its parents
					heap.Push(&q, n)
				}
			}
			return nil
		}
		c, err := repo.ReadCommit(h)
		if err != nil {
			return err
		}
		n := &sideNode{c: c, below: below, queued: true}
		nodes[h] = n
		heap.Push(&q, n)
		if !below {
			live++
		}
		return nil
	}
	if !base.IsZero() {
		if err := mark(base, true); err != nil {
			return nil, err
		}
	}
	if err := mark(head, false); err != nil {
		return nil, err
	}
	for live > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := heap.Pop(&q).(*sideNode)
		n.queued = false
		if !n.below {
			live--
		}
		for _, p := range n.c.ParentHashes {
			if err := mark(p, n.below); err != nil {
				return nil, err
			}
		}
	}
	// The commits found new, each after its parents: a depth-first walk that
	// lists a commit once all its parents are listed.
	isNew := func(h gitlog.Hash) bool { n, ok := nodes[h]; return ok && !n.below }
	var out []*gitlog.Commit
	done := map[gitlog.Hash]bool{}
	stack := []gitlog.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		if done[h] || !isNew(h) {
			stack = stack[:len(stack)-1]
			continue
		}
		c := nodes[h].c
		waiting := false
		for i := len(c.ParentHashes) - 1; i >= 0; i-- {
			if p := c.ParentHashes[i]; !done[p] && isNew(p) {
				stack = append(stack, p)
				waiting = true
			}
		}
		if waiting {
			continue
		}
		stack = stack[:len(stack)-1]
		done[h] = true
		out = append(out, c)
	}
	if base.IsZero() {
		return out, nil
	}
	// The check against a clock skew.
	kept := out[:0]
	really := map[gitlog.Hash]bool{}
	for _, c := range out {
		known := true
		for _, p := range c.ParentHashes {
			if really[p] {
				known = false
				break
			}
		}
		if known {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			mb, err := repo.MergeBase(ctx, c.Hash, base)
			if err != nil {
				return nil, err
			}
			if mb == c.Hash {
				continue // the base reaches it
			}
		}
		really[c.Hash] = true
		kept = append(kept, c)
	}
	return kept, nil
}

// sideNode is a commit met by newCommits.
type sideNode struct {
	c      *gitlog.Commit
	below  bool // the base reaches it
	queued bool
}

// sideQueue is a max-heap of commits by committer time: newest first.
type sideQueue []*sideNode

func (q sideQueue) Len() int { return len(q) }
func (q sideQueue) Less(i, j int) bool {
	return q[i].c.Committer.When.After(q[j].c.Committer.When)
}
func (q sideQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *sideQueue) Push(x any)   { *q = append(*q, x.(*sideNode)) }
func (q *sideQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}
