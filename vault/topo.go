package vault

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/memvault/memvault/gitlog"
)

// walkTopo calls fn for each commit reachable from head in git's --topo-order:
// every commit before its parents, so a side a merge brought in is listed
// beside the merge and never after the commits both sides share; among
// commits neither of which must come first, the newer (by commit date) comes
// first. fn may return gitlog.ErrStop to end the walk, which then returns nil.
//
// A chain of single-parent commits is its own order and is passed on as it
// is read, so the first page of a long linear history costs what its length
// does. Below a merge, the walk reads commits newest first until all the
// open lines meet in one commit strictly older than everything read, then
// orders what it read (Kahn's algorithm, newest first among the ready) and
// goes on from that commit. A clock that ran backwards (a parent dated after
// its child) can make that meeting point early, as it misleads git's own
// date walks; the order is then still one where each commit comes before
// every parent it was read with.
func (v *Vault) walkTopo(ctx context.Context, head gitlog.Hash, fn func(*gitlog.Commit) error) error {
	err := v.walkTopoFrom(ctx, head, fn)
	if errors.Is(err, gitlog.ErrStop) {
		return nil
	}
	return err
}

func (v *Vault) walkTopoFrom(ctx context.Context, tip gitlog.Hash, fn func(*gitlog.Commit) error) error {
	for !tip.IsZero() {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := v.repo.ReadCommit(tip)
		if err != nil {
			return err
		}
		if len(c.ParentHashes) <= 1 {
			if err := fn(c); err != nil {
				return err
			}
			tip = gitlog.Hash{}
			if len(c.ParentHashes) == 1 {
				tip = c.ParentHashes[0]
			}
			continue
		}
		region, next, err := v.readBelowMerge(ctx, c)
		if err != nil {
			return err
		}
		if err := emitTopo(region, fn); err != nil {
			return err
		}
		tip = next
	}
	return nil
}

// walkTopoShape is walkTopo for a walk that needs only each commit's hash:
// a chain of single-parent commits is followed through gitlog's Parents,
// which reads no commit the history index holds, and only the commits below
// a merge are read whole, to be ordered as walkTopo orders them.
func (v *Vault) walkTopoShape(ctx context.Context, head gitlog.Hash, fn func(gitlog.Hash) error) error {
	// The parents may come from the history index, a file in the vault's
	// folder: one that names a commit below itself must not keep the walk
	// going for ever.
	seen := map[gitlog.Hash]bool{}
	for tip := head; !tip.IsZero(); {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen[tip] {
			return fmt.Errorf("vault: log: commit %s comes back below itself: the history index %s is damaged; remove it, and memvault makes it again: %w",
				tip, filepath.Join(v.repo.StateDir(), "history-index"), ErrDamaged)
		}
		seen[tip] = true
		ps, err := v.repo.Parents(tip)
		if err != nil {
			return err
		}
		if len(ps) <= 1 {
			if err := fn(tip); err != nil {
				return err
			}
			tip = gitlog.Hash{}
			if len(ps) == 1 {
				tip = ps[0]
			}
			continue
		}
		c, err := v.repo.ReadCommit(tip)
		if err != nil {
			return err
		}
		region, next, err := v.readBelowMerge(ctx, c)
		if err != nil {
			return err
		}
		if err := emitTopo(region, func(c *gitlog.Commit) error { return fn(c.Hash) }); err != nil {
			return err
		}
		tip = next
	}
	return nil
}

// readBelowMerge reads the commits from merge m down to the first commit all
// its lines pass through (next, zero when they reach the first commits
// without meeting) and returns them, next excluded.
func (v *Vault) readBelowMerge(ctx context.Context, m *gitlog.Commit) ([]*gitlog.Commit, gitlog.Hash, error) {
	read := map[gitlog.Hash]bool{m.Hash: true}
	region := []*gitlog.Commit{m}
	oldest := m.Committer.When
	var open byDate
	queued := map[gitlog.Hash]bool{}
	push := func(c *gitlog.Commit) error {
		for _, p := range c.ParentHashes {
			if read[p] || queued[p] {
				continue
			}
			pc, err := v.repo.ReadCommit(p)
			if err != nil {
				return err
			}
			queued[p] = true
			heap.Push(&open, pc)
		}
		return nil
	}
	if err := push(m); err != nil {
		return nil, gitlog.Hash{}, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, gitlog.Hash{}, err
		}
		if open.Len() == 0 {
			return region, gitlog.Hash{}, nil
		}
		if open.Len() == 1 && open[0].Committer.When.Before(oldest) {
			return region, open[0].Hash, nil
		}
		c := heap.Pop(&open).(*gitlog.Commit)
		delete(queued, c.Hash)
		read[c.Hash] = true
		region = append(region, c)
		if c.Committer.When.Before(oldest) {
			oldest = c.Committer.When
		}
		if err := push(c); err != nil {
			return nil, gitlog.Hash{}, err
		}
	}
}

// emitTopo passes the commits of region to fn, each before its parents
// among them, the newest first of those whose children are all passed.
func emitTopo(region []*gitlog.Commit, fn func(*gitlog.Commit) error) error {
	in := make(map[gitlog.Hash]*gitlog.Commit, len(region))
	for _, c := range region {
		in[c.Hash] = c
	}
	children := make(map[gitlog.Hash]int, len(region))
	for _, c := range region {
		for _, p := range c.ParentHashes {
			if in[p] != nil {
				children[p]++
			}
		}
	}
	var ready byDate
	for _, c := range region {
		if children[c.Hash] == 0 {
			heap.Push(&ready, c)
		}
	}
	for ready.Len() > 0 {
		c := heap.Pop(&ready).(*gitlog.Commit)
		if err := fn(c); err != nil {
			return err
		}
		for _, p := range c.ParentHashes {
			if pc := in[p]; pc != nil {
				if children[p]--; children[p] == 0 {
					heap.Push(&ready, pc)
				}
			}
		}
	}
	return nil
}

// byDate is a heap of commits, the newest (by commit date, then hash) on top.
type byDate []*gitlog.Commit

func (h byDate) Len() int { return len(h) }
func (h byDate) Less(i, j int) bool {
	a, b := h[i].Committer.When, h[j].Committer.When
	if !a.Equal(b) {
		return a.After(b)
	}
	return h[i].Hash.String() < h[j].Hash.String()
}
func (h byDate) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *byDate) Push(x any)   { *h = append(*h, x.(*gitlog.Commit)) }
func (h *byDate) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// eachCommit calls fn for head and each of its ancestors, each once, in
// gitlog's pre-order (see gitlog.Repo.Walk), until fn returns gitlog.ErrStop or
// an error, which it returns unless it is gitlog.ErrStop, or until ctx ends.
func eachCommit(ctx context.Context, repo *gitlog.Repo, head gitlog.Hash, fn func(*gitlog.Commit) error) error {
	return repo.Walk(ctx, head, gitlog.WalkOptions{}, func(c *gitlog.Commit, _ string) (string, error) {
		return "", fn(c)
	})
}
