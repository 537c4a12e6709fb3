package vault

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// PendingChange is a change on the review line: an agent's command that
// waits for a person, or one a person rejected.
type PendingChange struct {
	// Change is the change's commit on the line (its Commit is the
	// change's ID) with the decrypted diff of what it did to the memory
	// the agent saw then.
	Change
	// Held says why the guard against mass deletion held it ("23 of 40
	// memory files"); "" for a write made in review mode.
	Held string `json:"held,omitempty"`
	// Deletes is how many files it deletes or empties.
	Deletes  int  `json:"deletes"`
	Rejected bool `json:"rejected,omitempty"`
}

// ReviewOptions select what Review lists.
type ReviewOptions struct {
	// Rejected lists the changes a person rejected (and none approved since),
	// newest first, instead of the pending ones.
	Rejected bool
}

// Review lists the changes of the review line that wait for a person,
// oldest first, each with its decrypted diff; or with opts.Rejected the
// rejected ones. The error wraps ErrNoIdentity or ErrDecrypt when files
// cannot be decrypted.
func (v *Vault) Review(ctx context.Context, opts ReviewOptions) ([]PendingChange, error) {
	var hs []gitlog.Hash
	if opts.Rejected {
		var err error
		if hs, err = v.rejected(ctx); err != nil {
			return nil, err
		}
	} else {
		st, err := v.readLine()
		if err != nil {
			return nil, err
		}
		hs = st.pending
	}
	out := make([]PendingChange, len(hs))
	errs := make([]error, len(hs))
	// Each change is decrypted on its own: spread over the cores, as Grep is.
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(len(hs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = v.pendingChange(ctx, hs[i])
				out[i].Rejected = opts.Rejected
			}
		}()
	}
	for i := range hs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pendingChange reads the change h of the review line.
func (v *Vault) pendingChange(ctx context.Context, h gitlog.Hash) (PendingChange, error) {
	c, err := v.repo.ReadCommit(h)
	if err != nil {
		return PendingChange{}, fmt.Errorf("vault: review: %w", err)
	}
	if len(c.ParentHashes) == 0 {
		return PendingChange{}, errLineDamaged(h, "a change with no parent")
	}
	parent, err := v.repo.RootTree(c.ParentHashes[0])
	if err != nil {
		return PendingChange{}, fmt.Errorf("vault: review: %w", err)
	}
	rec, err := v.record(c)
	if err != nil {
		return PendingChange{}, err
	}
	_, trs, err := v.lineMessage(c)
	if err != nil {
		return PendingChange{}, err
	}
	files, err := v.fileChanges(ctx, parent, c.TreeHash, "", true)
	if err != nil {
		return PendingChange{}, err
	}
	n, err := v.deletes(parent, c.TreeHash)
	if err != nil {
		return PendingChange{}, err
	}
	return PendingChange{Change: Change{Record: rec, Files: files}, Held: trailerValue(trs, trHeld), Deletes: n}, nil
}

// deletes counts the files deleted from root tree a to root tree b, and
// those emptied (blank now, with more before), by their sizes alone.
func (v *Vault) deletes(a, b gitlog.Hash) (int, error) {
	tcs, err := v.diffOpened(a, b, "")
	if err != nil {
		return 0, fmt.Errorf("vault: review: %w", err)
	}
	na, err := v.namesOfRoot(a)
	if err != nil {
		return 0, err
	}
	nb, err := v.namesOfRoot(b)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, tc := range tcs {
		switch {
		case tc.From.IsZero():
		case tc.To.IsZero():
			n++
		default:
			p := memPath(tc.Path)
			after, err := v.fileSizeIn(nb, p, tc.To)
			if err != nil || after > maxBlank {
				continue // sizes come from headers; only a small file is read to see whether it is blank
			}
			plain, err := v.readBlob(p, tc.To)
			if err != nil || len(strings.TrimSpace(string(plain))) > 0 {
				continue
			}
			if before, err := v.fileSizeIn(na, p, tc.From); err == nil && before > after {
				n++
			}
		}
	}
	return n, nil
}

// maxBlank is the size above which a file is not taken for one written blank.
const maxBlank = 64

// ReviewAll, among the IDs given to Approve or Reject, stands for every
// pending change.
const ReviewAll = "all"

// ReviewResult says what Approve or Reject did.
type ReviewResult struct {
	// Settled are the changes approved or rejected, full IDs, in the order
	// they were.
	Settled []string `json:"settled"`
	// Commits are, for each of Settled, the commit an approval made on
	// main; "" for a change main held already, and for a rejection.
	Commits []string `json:"commits"`
	// Conflicts are the files a follow of main left with conflict markers
	// in the review line's view after an approval.
	Conflicts []string `json:"conflicts,omitempty"`
}

// Approve replays the changes ids name (each a prefix of at least 4 hex
// digits of a pending or rejected change, or ReviewAll) on main, oldest
// first, each as one new commit with the change's own subject and trailers
// (its command, path, tool-use id, agent and session) and an
// Memory-Approved trailer naming it, signed by this vault's writer key:
// only a writer approves. A change that changes nothing on main is approved
// without a commit. Then the review line's view stands on main again.
//
// Each change is replayed as git's cherry-pick does, file by file, merged by
// lines with what main holds now. A change that does not apply (main changed
// the same lines since, or an earlier pending change it builds on is not
// approved) stops the approval there: the error is a *ConflictError (Op
// "approve", wrapping ErrConflict), and the changes before it stay
// approved, as the result says. Other errors wrap ErrUnknownRevision for an
// ID that names no change, or more than one; ErrNotWriter when this
// identity's signing key is not a writer; ErrNoIdentity or ErrDecrypt; and
// a *LimitError when a change would take main over the vault's limits.
func (v *Vault) Approve(ctx context.Context, ids []string) (ReviewResult, error) {
	var res ReviewResult
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return res, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	st, err := v.readLine()
	if err != nil {
		return res, err
	}
	sel, err := v.selectChanges(ctx, st, ids, true)
	if err != nil {
		return res, err
	}
	var done []gitlog.Hash
	var stop error
	for _, h := range sel {
		made, err := v.approveOne(ctx, w, h)
		if err != nil {
			stop = err
			break
		}
		done = append(done, h)
		res.Settled = append(res.Settled, h.String())
		res.Commits = append(res.Commits, "")
		if !made.IsZero() {
			res.Commits[len(res.Commits)-1] = made.String()
		}
	}
	if len(done) > 0 {
		head, err := v.repo.Head()
		if err != nil {
			return res, fmt.Errorf("vault: %w", err)
		}
		next, err := v.follow(ctx, w, st, head, done)
		if err != nil {
			return res, err
		}
		res.Conflicts = conflictsOf(next, v)
	}
	return res, stop
}

// approveOne replays the change h on main under the lock w, and returns the
// commit made (ZeroHash when main held the change's result already).
func (v *Vault) approveOne(ctx context.Context, w *gitlog.Writer, h gitlog.Hash) (gitlog.Hash, error) {
	c, err := v.repo.ReadCommit(h)
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: approve: %w", err)
	}
	if len(c.ParentHashes) == 0 {
		return gitlog.ZeroHash, errLineDamaged(h, "a change with no parent")
	}
	parent, err := v.repo.RootTree(c.ParentHashes[0])
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: approve: %w", err)
	}
	head, err := v.Snapshot(ctx)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	u, err := v.undoerOn(head, c.TreeHash)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	paths, where, err := u.pick(ctx, parent, c.TreeHash, followLabels, false)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	if len(paths) > 0 {
		return gitlog.ZeroHash, &ConflictError{Op: "approve", Commit: h.String(), Paths: paths, Where: where}
	}
	if len(u.changes) == 0 {
		return gitlog.ZeroHash, nil
	}
	g, err := v.changesGrowth(ctx, head.root, u.changes)
	if err == nil {
		err = v.checkGrowth(ctx, head, g)
	}
	if err != nil {
		return gitlog.ZeroHash, err
	}
	rec, err := v.record(c)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	// The change keeps its own provenance (its agent, session and tool-use
	// id, as blame names them); the signature names the writer who
	// approved it.
	m := Meta{Command: rec.Command, ToolUseID: rec.ToolUseID, Agent: rec.Agent, Session: rec.Session,
		Origin: rec.Origin, When: rec.Time}
	if m.Command == "" {
		m.Command = "approve"
	}
	msg := func(_ *string, trs *[]trailer) { *trs = append(*trs, trailer{trApproved, h.String()}) }
	return v.commitStagedTo(w, onMain, head.commit, rec.Path, rec.NewPath, u.changes, 1, m, msg)
}

// conflictsOf are the files the follow that made st left with conflict
// markers.
func conflictsOf(st lineState, v *Vault) []string {
	c, err := v.repo.ReadCommit(st.tip)
	if err != nil {
		return nil
	}
	_, trs, err := v.lineMessage(c)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range trs {
		if t.key == trConflict {
			out = append(out, t.value)
		}
	}
	return out
}

// Reject takes the pending changes ids name (prefixes as for Approve, or
// ReviewAll) out of the review line's view, newest first, each with a commit
// of the line that names it. A rejected change stays in the line's history:
// Review lists it with ReviewOptions.Rejected, and Approve takes it later.
// Rejecting every pending change stands the view on main as it is.
//
// A change that later pending changes build on (they changed the same lines
// since) is not taken out alone: the error is then a *ConflictError (Op
// "reject", wrapping ErrConflict), and the changes rejected before it stay
// rejected. Other errors wrap ErrUnknownRevision for an ID that names no
// pending change or more than one, ErrNotWriter, ErrNoIdentity or
// ErrDecrypt.
func (v *Vault) Reject(ctx context.Context, ids []string) (ReviewResult, error) {
	var res ReviewResult
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return res, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	st, err := v.readLine()
	if err != nil {
		return res, err
	}
	sel, err := v.selectChanges(ctx, st, ids, false)
	if err != nil {
		return res, err
	}
	if len(sel) == 0 {
		return res, nil
	}
	if len(sel) == len(st.pending) {
		// Every change: the view is main's tree, as nothing is pending.
		head, err := v.repo.Head()
		if err != nil {
			return res, fmt.Errorf("vault: %w", err)
		}
		var extra []trailer
		for _, h := range sel {
			extra = append(extra, trailer{trRejected, h.String()})
			res.Settled = append(res.Settled, h.String())
			res.Commits = append(res.Commits, "")
		}
		_, err = v.ownCommit(w, lineFollow, st.tip, head, st.tip, nil, lineState{main: head}, extra)
		return res, err
	}
	slices.Reverse(sel)
	for _, h := range sel {
		if st, err = v.rejectOne(ctx, w, st, h); err != nil {
			return res, err
		}
		res.Settled = append(res.Settled, h.String())
		res.Commits = append(res.Commits, "")
	}
	return res, nil
}

// rejectOne takes the pending change h out of the view at st's tip under the
// lock w, as a revert of it made on the view, and returns the state after.
func (v *Vault) rejectOne(ctx context.Context, w *gitlog.Writer, st lineState, h gitlog.Hash) (lineState, error) {
	c, err := v.repo.ReadCommit(h)
	if err != nil {
		return st, fmt.Errorf("vault: reject: %w", err)
	}
	if len(c.ParentHashes) == 0 {
		return st, errLineDamaged(h, "a change with no parent")
	}
	parent, err := v.repo.RootTree(c.ParentHashes[0])
	if err != nil {
		return st, fmt.Errorf("vault: reject: %w", err)
	}
	view, err := v.snapshotAt(st.tip)
	if err != nil {
		return st, err
	}
	u, err := v.undoerOn(view, parent)
	if err != nil {
		return st, err
	}
	paths, where, err := u.pick(ctx, c.TreeHash, parent, textdiff.Labels{Ours: "pending", Base: "rejected", Theirs: "before"}, false)
	if err != nil {
		return st, err
	}
	if len(paths) > 0 {
		return st, &ConflictError{Op: "reject", Commit: h.String(), Paths: paths, Where: where}
	}
	next := lineState{main: st.main}
	for _, p := range st.pending {
		if p != h {
			next.pending = append(next.pending, p)
		}
	}
	return v.ownCommit(w, lineReject, st.tip, st.tip, gitlog.ZeroHash, u.changes, next, []trailer{{trRejected, h.String()}})
}

// selectChanges resolves ids to changes of the line, in the line's order:
// pending ones, and with orRejected rejected ones (after the pending ones).
func (v *Vault) selectChanges(ctx context.Context, st lineState, ids []string, orRejected bool) ([]gitlog.Hash, error) {
	if slices.Contains(ids, ReviewAll) {
		return slices.Clone(st.pending), nil
	}
	want := map[gitlog.Hash]bool{}
	var rejected []gitlog.Hash
	for _, id := range ids {
		h, err := findChange(id, st.pending)
		if err != nil && orRejected {
			if rejected == nil {
				if rejected, err = v.rejected(ctx); err != nil {
					return nil, err
				}
			}
			h, err = findChange(id, rejected)
		}
		if err != nil {
			return nil, err
		}
		want[h] = true
	}
	var out []gitlog.Hash
	for _, h := range st.pending {
		if want[h] {
			out = append(out, h)
			delete(want, h)
		}
	}
	for i := len(rejected) - 1; i >= 0; i-- { // oldest first
		if want[rejected[i]] {
			out = append(out, rejected[i])
		}
	}
	return out, nil
}

// findChange finds the one change of hs whose ID starts with prefix.
func findChange(prefix string, hs []gitlog.Hash) (gitlog.Hash, error) {
	p := strings.ToLower(prefix)
	if len(p) < 4 || len(p) > 40 {
		return gitlog.ZeroHash, fmt.Errorf("vault: review: %w %q: a change is named by 4 to 40 hex digits of its ID", ErrUnknownRevision, prefix)
	}
	if strings.Trim(p, "0123456789abcdef") != "" {
		return gitlog.ZeroHash, fmt.Errorf("vault: review: %w %q: not hex digits", ErrUnknownRevision, prefix)
	}
	var found []gitlog.Hash
	for _, h := range hs {
		if strings.HasPrefix(h.String(), p) {
			found = append(found, h)
		}
	}
	switch len(found) {
	case 0:
		return gitlog.ZeroHash, fmt.Errorf("vault: review: %w %q: no such change waits for review", ErrUnknownRevision, prefix)
	case 1:
		return found[0], nil
	}
	return gitlog.ZeroHash, fmt.Errorf("vault: review: %w %q: names %d changes; give more of the ID", ErrUnknownRevision, prefix, len(found))
}

// rejected lists the changes the line's history rejected and no later
// commit approved, newest first.
func (v *Vault) rejected(ctx context.Context) ([]gitlog.Hash, error) {
	tip, err := v.repo.Ref(reviewRef)
	if err != nil {
		return nil, fmt.Errorf("vault: review: %w", err)
	}
	approved := map[gitlog.Hash]bool{}
	seen := map[gitlog.Hash]bool{}
	var out []gitlog.Hash
	for h := tip; !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return nil, fmt.Errorf("vault: review: %w", err)
		}
		kind, trs, err := v.lineMessage(c)
		if err != nil {
			return nil, err
		}
		as, _ := hashTrailers(trs, trApproved)
		for _, a := range as {
			approved[a] = true
		}
		rs, _ := hashTrailers(trs, trRejected)
		for _, r := range rs {
			if !approved[r] && !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
		switch {
		case kind == lineFollow && len(c.ParentHashes) > 1:
			h = c.ParentHashes[1] // the line before it; the first parent is main's
		case kind == lineFollow || len(c.ParentHashes) == 0:
			h = gitlog.ZeroHash // the line's first commit
		default:
			h = c.ParentHashes[0]
		}
	}
	return out, nil
}
