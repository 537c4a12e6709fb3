package vault

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// The trust rules of admission, beyond each commit's own signature (signed,
// signing.go: a writer of each parent's tree signed it). See
// docs/membership.md.
//
//   - A commit signed by a writer removed in the state this clone holds (its
//     head's .memvault/removed, and the arriving tip's) is refused, whatever
//     parent it names, unless a current writer vouched for it: signed a commit
//     that arrived with it and has it as an ancestor (that writer's clone took
//     it, or held it before the removal). A person may take such commits
//     after looking (acceptRemoved): this clone's own merge then vouches.
//   - A clone that pinned writers (clone --expect-writer, join) takes a
//     history only when each of its first commits is an ancestor of a commit
//     one of them signed: a signature vouches for its commit and all its
//     ancestry, and a history the host made up carries none.

// skipTrust turns the trust rules off (signatures are still checked): only
// BenchmarkTrust sets it, to measure what they cost a clone and a sync, old
// and new in one run.
var skipTrust atomic.Bool

// trustRules are what an admission takes on trust.
type trustRules struct {
	// held is the commit this clone holds now (zero: a new clone); the
	// writers removed there count.
	held gitlog.Hash
	// pinned are the fingerprints of the writers one of whom must vouch for
	// every first commit of the history (empty: trust on first use).
	pinned []string
	// acceptRemoved takes commits of removed writers no current writer
	// vouched for.
	acceptRemoved bool
}

// vouching is what admission notes of the commits it walks for trusted.
type vouching struct {
	trust   trustRules
	removed writerSet // the removed writers of the held head and of the tip
	mu      sync.Mutex
	signers map[gitlog.Hash]keys.Writer
	walk    []*gitlog.Commit // the commits judged, each once
}

// loadRemoved reads the removed writers of the trees of theirs and held.
func (a *admission) loadRemoved(theirs, held gitlog.Hash) error {
	for _, c := range []gitlog.Hash{theirs, held} {
		if c.IsZero() {
			continue
		}
		root, err := a.repo.RootTree(c)
		if err != nil {
			return fmt.Errorf("vault: admit: %w", err)
		}
		set, err := a.writers.writersAt(a.repo, root)
		if err != nil {
			return fmt.Errorf("vault: admit: %s: %w", keys.RemovedPath, err)
		}
		for _, w := range set.removed {
			if !a.removed.isRemoved(w.Public) {
				a.removed.removed = append(a.removed.removed, w)
			}
		}
	}
	return nil
}

// noteSigner records that w signed commit h.
func (a *admission) noteSigner(h gitlog.Hash, w keys.Writer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.signers == nil {
		a.signers = map[gitlog.Hash]keys.Writer{}
	}
	a.signers[h] = w
}

// walked records that c was judged.
func (a *admission) walked(c *gitlog.Commit) { a.walk = append(a.walk, c) }

// trusted applies the trust rules to the commits walked up to theirs.
func (a *admission) trusted(theirs gitlog.Hash) error {
	if len(a.walk) == 0 || skipTrust.Load() {
		return nil
	}
	byHash := make(map[gitlog.Hash]*gitlog.Commit, len(a.walk))
	for _, c := range a.walk {
		byHash[c.Hash] = c
	}
	// vouchedBy marks every walked commit that is an ancestor of (or is) a
	// walked commit for which ok says yes.
	vouchedBy := func(ok func(w keys.Writer, signed bool) bool) map[gitlog.Hash]bool {
		marked := map[gitlog.Hash]bool{}
		var stack []gitlog.Hash
		for _, c := range a.walk {
			w, signed := a.signers[c.Hash]
			if ok(w, signed) {
				stack = append(stack, c.Hash)
			}
		}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c, ok := byHash[h]
			if !ok || marked[h] {
				continue
			}
			marked[h] = true
			stack = append(stack, c.ParentHashes...)
		}
		return marked
	}
	if len(a.removed.removed) > 0 && !a.trust.acceptRemoved {
		current := vouchedBy(func(w keys.Writer, signed bool) bool { return signed && !a.removed.isRemoved(w.Public) })
		var bad []string
		for _, c := range a.walk {
			if w, ok := a.signers[c.Hash]; ok && a.removed.isRemoved(w.Public) && !current[c.Hash] {
				bad = append(bad, fmt.Sprintf("%s (signed by %s)", c.Hash, describeWriter(w)))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("vault: %d commits signed by a removed writer, which no current writer vouched for: %s: %w",
				len(bad), strings.Join(firstFew(bad, 5), ", "), ErrRemovedWriter)
		}
	}
	if len(a.trust.pinned) > 0 {
		pinned := vouchedBy(func(w keys.Writer, signed bool) bool {
			return signed && slices.Contains(a.trust.pinned, w.Fingerprint)
		})
		for _, c := range a.walk {
			if len(c.ParentHashes) == 0 && !pinned[c.Hash] {
				return fmt.Errorf("vault: the history of %s starts at %s, and none of the writers you named (%s) signed it or a commit after it: %w",
					theirs, c.Hash, strings.Join(a.trust.pinned, ", "), ErrNotVouched)
			}
		}
	}
	return nil
}

// describeWriter names a writer in an error: its name, if it has one, and
// its fingerprint.
func describeWriter(w keys.Writer) string {
	if w.Comment == "" {
		return w.Fingerprint
	}
	return oneLine(w.Comment) + " " + w.Fingerprint
}

// firstFew keeps the first n of xs, and says how many more there are.
func firstFew(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
}

// heldFromRemoved reports whether ours holds, since base, commits signed by a
// writer that theirs removed since base: a clone that took a writer's work
// before it heard of the removal. Its merge with theirs must not carry those
// commits on (every clone that knows of the removal refuses them): it puts
// their content on top of theirs instead, taken up by this writer.
func (v *Vault) heldFromRemoved(ctx context.Context, base, ours, theirs gitlog.Hash) (bool, error) {
	sets := [2]writerSet{}
	for i, c := range []gitlog.Hash{base, theirs} {
		var err error
		if sets[i], err = v.writersOfCommit(c); err != nil {
			return false, fmt.Errorf("vault: sync: %s: %w", keys.RemovedPath, err)
		}
	}
	var removed []string
	for _, w := range sets[1].removed {
		if !sets[0].isRemoved(w.Public) {
			removed = append(removed, w.Fingerprint)
		}
	}
	if len(removed) == 0 {
		return false, nil
	}
	cs, err := newCommits(ctx, v.repo, base, ours)
	if err != nil {
		return false, fmt.Errorf("vault: sync: %w", err)
	}
	for _, c := range cs {
		_, armored, err := v.repo.SignedCommit(c.Hash)
		if err != nil {
			return false, fmt.Errorf("vault: sync: %w", err)
		}
		if slices.Contains(removed, keys.SignerFingerprint(armored)) {
			return true, nil
		}
	}
	return false, nil
}
