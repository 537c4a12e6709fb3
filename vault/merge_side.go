package vault

import (
	"fmt"

	"github.com/memvault/memvault/gitlog"
)

// sideGraph is sideCommits for a side with merges, the usual case in a fleet:
// after one round, each side's head is a merge with the other. Walking the
// whole history below the base to know where to stop made every round of a
// busy fleet cost the length of its history (a round took 0.25 s over 1,000
// commits and 0.7 s over 10,000); newCommits reads the side's commits and
// about as many below the base.
func (m *merger) sideGraph(head gitlog.Hash) ([]*gitlog.Commit, error) {
	cs, err := newCommits(m.ctx, m.v.repo, m.base, head)
	if err != nil {
		return nil, fmt.Errorf("vault: merge: %w", err)
	}
	return cs, nil
}
