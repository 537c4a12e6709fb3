package vault

// The review line: the writes of an agent that a person approves before they
// reach main.
//
// The line is a ref of this clone alone, refs/memvault/pending: sync pushes
// main and nothing else, and git clone copies refs/heads only. Its commits
// are of two kinds:
//
//   - a change: one agent command, made on the line's view (the tree of the
//     commit before it) exactly as it would have been made on main, with the
//     same message and trailers, one parent;
//   - a commit of the line's own (trReview): "follow" stands the view on a
//     main commit again, its parents that main commit and the line's tip
//     before it, its tree main's with every pending change merged in; "reject"
//     takes a change back out of the view, one parent. Each names the main
//     commit the view stands on (trReviewMain) and the changes still pending
//     after it (trPending), so the line's state is read from its tip down to
//     its last commit of its own.
//
// Nothing is ever taken off the line: a rejected change stays in its history,
// and can be approved later. Approving replays a change on main as a new
// commit signed by the writer who approves (approve.go), naming the change
// (trApproved); the next follow finds it there and leaves it out of the
// pending ones, so an approval cut short by a crash is counted once it
// reached main, and never twice.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// reviewRef is the review line.
const reviewRef = "refs/memvault/pending"

// The kinds of commit of the line's own (trReview).
const (
	lineFollow = "follow"
	lineReject = "reject"
)

// lineState is where the review line stands: its tip, the main commit the
// view at the tip stands on, and the changes that wait for a person, oldest
// first. The zero value is a vault with no line.
type lineState struct {
	tip     gitlog.Hash
	main    gitlog.Hash
	pending []gitlog.Hash
}

// lineCache keeps the state of the line's last tip read, so that a process
// reads each commit of the line once.
type lineCache struct {
	mu sync.Mutex
	st lineState
}

func (c *lineCache) get() lineState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

func (c *lineCache) set(st lineState) {
	c.mu.Lock()
	c.st = st
	c.mu.Unlock()
}

// errLineDamaged is the error of a line memvault cannot read.
func errLineDamaged(h gitlog.Hash, why string) error {
	return fmt.Errorf("vault: the review line (%s) is damaged at %s: %s", reviewRef, shortHash(h), why)
}

// readLine reads the review line's state: from its tip down to its last
// commit of its own, which names the rest.
func (v *Vault) readLine() (lineState, error) {
	tip, err := v.repo.Ref(reviewRef)
	if err != nil {
		return lineState{}, fmt.Errorf("vault: review: %w", err)
	}
	if tip.IsZero() {
		return lineState{}, nil
	}
	known := v.line.get()
	if known.tip == tip {
		return known, nil
	}
	var above []gitlog.Hash
	var base lineState
	for h := tip; ; {
		if h == known.tip {
			base = known
			break
		}
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return lineState{}, fmt.Errorf("vault: review: %w", err)
		}
		kind, trs, err := v.lineMessage(c)
		if err != nil {
			return lineState{}, err
		}
		if kind != "" {
			if base, err = ownState(c, trs); err != nil {
				return lineState{}, err
			}
			break
		}
		above = append(above, h)
		if len(c.ParentHashes) == 0 {
			return lineState{}, errLineDamaged(h, "a change with no parent")
		}
		h = c.ParentHashes[0]
	}
	slices.Reverse(above)
	st := lineState{tip: tip, main: base.main, pending: slices.Concat(base.pending, above)}
	v.line.set(st)
	return st, nil
}

// lineMessage opens the message of a commit of the line: its kind when it
// is one of the line's own ("" for a change), and its trailers.
func (v *Vault) lineMessage(c *gitlog.Commit) (kind string, trs []trailer, err error) {
	msg, err := v.openedMessage(c)
	if err != nil {
		return "", nil, err
	}
	if msg == "" {
		return "", nil, errLineDamaged(c.Hash, "a sealed message that does not open")
	}
	_, trs = parseMessage(msg)
	return trailerValue(trs, trReview), trs, nil
}

// ownState is the state a commit of the line's own names.
func ownState(c *gitlog.Commit, trs []trailer) (lineState, error) {
	st := lineState{tip: c.Hash}
	var err error
	if st.main, err = gitlog.ParseHash(trailerValue(trs, trReviewMain)); err != nil {
		return st, errLineDamaged(c.Hash, "no main commit named")
	}
	if st.pending, err = hashTrailers(trs, trPending); err != nil {
		return st, errLineDamaged(c.Hash, err.Error())
	}
	return st, nil
}

// hashTrailers are the commits trailers named key name, in order.
func hashTrailers(trs []trailer, key string) ([]gitlog.Hash, error) {
	var hs []gitlog.Hash
	for _, t := range trs {
		if t.key == key {
			h, err := gitlog.ParseHash(t.value)
			if err != nil {
				return nil, fmt.Errorf("%s %q", key, t.value)
			}
			hs = append(hs, h)
		}
	}
	return hs, nil
}

// ownCommit writes a commit of the line's own of kind on parent (main's
// head for a follow, the tip for a reject), merging merge when it is not
// zero, with changes; st is the state it leaves (its main and pending), and
// extra more trailers. It moves the line from from and returns the new state.
func (v *Vault) ownCommit(w *gitlog.Writer, kind string, from, parent, merge gitlog.Hash, changes []gitlog.Change, st lineState, extra []trailer) (lineState, error) {
	subject := "review: " + kind
	if kind == lineFollow {
		subject += " main at " + shortHash(st.main)
	}
	trs := []trailer{{trReview, kind}, {trReviewMain, st.main.String()}}
	trs = append(trs, extra...)
	for _, h := range st.pending {
		trs = append(trs, trailer{trPending, h.String()})
	}
	h, err := v.writeCommitTo(w, target{ref: reviewRef, from: from, merge: merge}, parent, subject, trs, changes, "memvault", "", time.Time{})
	if err != nil {
		return lineState{}, err
	}
	st.tip = h
	v.line.set(st)
	return st, nil
}

// standOn makes the line's view stand on main's head (head) under the lock
// w: a line with nothing pending starts again from head's tree; one whose
// view stands on an older main follows it (see follow). It returns the state
// after, whose tip is the view an agent's next change is made on.
func (v *Vault) standOn(ctx context.Context, w *gitlog.Writer, st lineState, head gitlog.Hash) (lineState, error) {
	if st.main == head && !st.tip.IsZero() {
		if len(st.pending) > 0 {
			return st, nil
		}
		same, err := v.sameTree(st.tip, head)
		if err != nil || same {
			return st, err
		}
	}
	return v.follow(ctx, w, st, head, nil)
}

// sameTree tells whether commits a and b hold the same tree.
func (v *Vault) sameTree(a, b gitlog.Hash) (bool, error) {
	ra, err := v.repo.RootTree(a)
	if err != nil {
		return false, fmt.Errorf("vault: review: %w", err)
	}
	rb, err := v.repo.RootTree(b)
	if err != nil {
		return false, fmt.Errorf("vault: review: %w", err)
	}
	return ra == rb, nil
}

// followLabels name the sides of a line that a follow merges: main is ours,
// the pending changes theirs, as in the view's conflict markers.
var followLabels = textdiff.Labels{Ours: "main", Base: "before", Theirs: "pending changes"}

// follow stands the line's view on head: a commit of the line's own whose
// tree is head's with every pending change merged in by lines, file by file
// (what the pending changes did, from the main the view stood on to the view,
// picked onto head; see pick). A change whose approval reached main since is
// no longer pending (its approval is found on main, or is among also, and
// named). Where the
// pending changes and main touch the same lines the view holds both
// versions between conflict markers, named as a sync's merge names them.
func (v *Vault) follow(ctx context.Context, w *gitlog.Writer, st lineState, head gitlog.Hash, also []gitlog.Hash) (lineState, error) {
	approved, err := v.approvedSince(ctx, head, st.main)
	if err != nil {
		return lineState{}, err
	}
	for _, h := range also {
		approved[h] = true
	}
	next := lineState{main: head}
	var extra []trailer
	for _, h := range slices.SortedFunc(maps.Keys(approved), func(a, b gitlog.Hash) int { return bytes.Compare(a[:], b[:]) }) {
		extra = append(extra, trailer{trApproved, h.String()})
	}
	for _, h := range st.pending {
		if !approved[h] {
			next.pending = append(next.pending, h)
		}
	}
	var changes []gitlog.Change
	if len(next.pending) > 0 {
		snap, err := v.snapshotAt(head)
		if err != nil {
			return lineState{}, err
		}
		from, err := v.repo.RootTree(st.main)
		if err != nil {
			return lineState{}, fmt.Errorf("vault: review: %w", err)
		}
		to, err := v.repo.RootTree(st.tip)
		if err != nil {
			return lineState{}, fmt.Errorf("vault: review: %w", err)
		}
		u, err := v.undoerOn(snap, to)
		if err != nil {
			return lineState{}, err
		}
		conflicts, _, err := u.pick(ctx, from, to, followLabels, true)
		if err != nil {
			return lineState{}, err
		}
		for _, p := range conflicts {
			extra = append(extra, trailer{trConflict, p})
		}
		changes = u.changes
	}
	return v.ownCommit(w, lineFollow, st.tip, head, st.tip, changes, next, extra)
}

// maxApprovedScan bounds how far back along main's first parents a follow
// looks for approvals made since the view last stood on main.
const maxApprovedScan = 10_000

// approvedSince returns the pending changes that commits of main approve,
// from head back along first parents to since (not included).
func (v *Vault) approvedSince(ctx context.Context, head, since gitlog.Hash) (map[gitlog.Hash]bool, error) {
	found := map[gitlog.Hash]bool{}
	for h, n := head, 0; !h.IsZero() && h != since && n < maxApprovedScan; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return nil, fmt.Errorf("vault: review: %w", err)
		}
		if msg, err := v.openedMessage(c); err == nil {
			_, trs := parseMessage(msg)
			if a := trailerValue(trs, trApproved); a != "" {
				if ah, err := gitlog.ParseHash(a); err == nil {
					found[ah] = true
				}
			}
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return found, nil
}

// AgentOptions shape the store an agent's face works on (Vault.Agent).
type AgentOptions struct {
	// Review puts every write on the review line, for a person to approve;
	// the vault's own setting (Limits.Review) does too.
	Review bool
}

// AgentStore is the vault as an agent's face reaches it: the memory tool,
// the MCP server, the mount. Writes obey the guard against mass deletion:
// a command that, with its session's run of commands before it, deletes or
// empties more files than the vault's limits allow (Limits.MassDeleteFiles,
// Limits.MassDeleteShare) does not reach main, but waits on the review line
// for a person, and Update returns a *HeldError.
//
// In review mode every write goes to the review line, and reads show main
// with the pending changes on top (the line's view), so the agent reads back
// what it wrote while main, sync and other clones see only what a person
// approved. When main moves under the line (a sync, an approval), the next
// read or write stands the view on it again.
//
// Its methods are safe for concurrent use, and serialised with every other
// writer of the vault by the vault's lock.
type AgentStore struct {
	v      *Vault
	review bool
}

// Agent returns the store an agent's face works on.
func (v *Vault) Agent(opts AgentOptions) *AgentStore {
	return &AgentStore{v: v, review: opts.Review || v.limits.Review}
}

// Review tells whether the store puts its writes on the review line.
func (a *AgentStore) Review() bool { return a.review }

// Limits are the vault's limits.
func (a *AgentStore) Limits() Limits { return a.v.limits }

// Snapshot returns the memory the agent sees: main, or in review mode the
// line's view. Its errors are Vault.Snapshot's.
func (a *AgentStore) Snapshot(ctx context.Context) (*Snapshot, error) {
	if !a.review {
		return a.v.Snapshot(ctx)
	}
	return a.v.viewSnapshot(ctx)
}

// viewSnapshot is the review line's view: main itself while nothing is
// pending; otherwise the line's tip, once it stands on main's head.
func (v *Vault) viewSnapshot(ctx context.Context) (*Snapshot, error) {
	st, err := v.readLine()
	if err != nil {
		return nil, err
	}
	if len(st.pending) == 0 {
		return v.Snapshot(ctx)
	}
	head, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	if st.main == head {
		return v.snapshotAt(st.tip)
	}
	w, err := v.repo.Lock(ctx)
	if errors.Is(err, ErrReadOnly) {
		return v.snapshotAt(st.tip) // nothing can follow main here: the view as it was
	} else if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	if st, err = v.readLine(); err != nil {
		return nil, err
	}
	if head, err = v.repo.Head(); err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	if len(st.pending) == 0 {
		return v.snapshotAt(head)
	}
	if st, err = v.standOn(ctx, w, st, head); err != nil {
		return nil, err
	}
	return v.snapshotAt(st.tip)
}

// Update runs fn as Vault.Update does, on what the agent sees (see
// Snapshot), and commits what it staged: in review mode on the review line;
// otherwise on main, unless the guard against mass deletion holds it, when
// it goes on the line and the error is a *HeldError (wrapping ErrHeld) that
// names it. Other errors are Vault.Update's.
func (a *AgentStore) Update(ctx context.Context, meta Meta, fn func(tx *Tx) error) error {
	v := a.v
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	if a.review {
		st, view, err := v.lineView(ctx, w)
		if err != nil {
			return err
		}
		tx, err := runTx(view, fn)
		if err != nil || tx == nil {
			return err
		}
		_, err = v.commitOnLine(w, st, tx, meta, "")
		return err
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return err
	}
	tx, err := runTx(snap, fn)
	if err != nil || tx == nil {
		return err
	}
	r, err := v.runWith(ctx, snap, meta, tx)
	if err != nil {
		return err
	}
	if !r.over(v.limits) {
		_, err = v.commitTx(w, onMain, tx, meta, r.message)
		return err
	}
	held := &HeldError{Files: r.files, Of: r.of, Limit: r.limit(v.limits)}
	st, view, err := v.lineView(ctx, w)
	if err != nil {
		return err
	}
	// The change is made again on the line's view, which may hold changes
	// held before. One the view cannot take (a deletion held before took
	// the same files) waits there already: nothing new is held.
	if tx, err := runTx(view, fn); err == nil && tx != nil {
		h, err := v.commitOnLine(w, st, tx, meta, held.reason())
		if err != nil {
			return err
		}
		held.ID = h.String()
	}
	return held
}

// lineView stands the review line on main's head under the lock w and
// returns its state and its view, which an agent's change is made on.
func (v *Vault) lineView(ctx context.Context, w *gitlog.Writer) (lineState, *Snapshot, error) {
	st, err := v.readLine()
	if err != nil {
		return st, nil, err
	}
	head, err := v.repo.Head()
	if err != nil {
		return st, nil, fmt.Errorf("vault: %w", err)
	}
	if st, err = v.standOn(ctx, w, st, head); err != nil {
		return st, nil, err
	}
	snap, err := v.snapshotAt(st.tip)
	return st, snap, err
}

// commitOnLine commits tx, made on the view at st's tip, as a pending change
// under the lock w, with held (when not "") as the guard's reason.
func (v *Vault) commitOnLine(w *gitlog.Writer, st lineState, tx *Tx, meta Meta, held string) (gitlog.Hash, error) {
	var msg messageFunc
	if held != "" {
		msg = func(_ *string, trs *[]trailer) { *trs = append(*trs, trailer{trHeld, held}) }
	}
	h, err := v.commitTx(w, target{ref: reviewRef, from: st.tip}, tx, meta, msg)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	v.line.set(lineState{tip: h, main: st.main, pending: append(slices.Clip(st.pending), h)})
	return h, nil
}

// Watch is Vault.Watch: it also tells of moves of the review line.
func (a *AgentStore) Watch(ctx context.Context) (<-chan struct{}, error) { return a.v.Watch(ctx) }

// RecordView is Vault.RecordView.
func (a *AgentStore) RecordView(p string) error { return a.v.RecordView(p) }

// Log is Vault.Log: main's history, what a person approved.
func (a *AgentStore) Log(ctx context.Context, opts LogOptions) ([]Record, error) {
	return a.v.Log(ctx, opts)
}

// Grep is Vault.Grep, of what the agent sees when opts names no revision.
func (a *AgentStore) Grep(ctx context.Context, re *regexp.Regexp, opts GrepOptions) (*GrepResult, error) {
	if opts.Rev == "" && a.review {
		snap, err := a.v.viewSnapshot(ctx)
		if err != nil {
			return nil, err
		}
		opts.Rev = snap.Commit()
	}
	return a.v.Grep(ctx, re, opts)
}

// Blame is Vault.Blame, of what the agent sees when rev is "".
func (a *AgentStore) Blame(ctx context.Context, path, rev string) (*Blame, error) {
	if rev == "" && a.review {
		snap, err := a.v.viewSnapshot(ctx)
		if err != nil {
			return nil, err
		}
		rev = snap.Commit()
	}
	return a.v.Blame(ctx, path, rev)
}

// ErrHeld: an agent's change deletes or empties more of the memory than the
// vault lets one command or session do alone; it waits for a person on the
// review line (see AgentStore).
var ErrHeld = errors.New("held for a person's approval")

// HeldError is the error of an agent's change that the guard against mass
// deletion held. It wraps ErrHeld.
type HeldError struct {
	// ID is the pending change that holds it (its commit on the review
	// line); "" when the line's view could not take it, because a change
	// held before did the same already.
	ID string
	// Files is how many files the session's run deleted or emptied with
	// this change, of the Of files the memory held when the run began.
	Files, Of int
	// Limit says which limit it passed: "5 files", "25% of the memory".
	Limit string
}

// Error says what was held and why; it names no content.
func (e *HeldError) Error() string {
	id := "waits"
	if e.ID != "" {
		id = "waits as " + e.ID[:min(12, len(e.ID))]
	}
	return fmt.Sprintf("vault: a change that deletes or empties %s %s for a person's approval (over %s)", e.reason(), id, e.Limit)
}

// Unwrap returns ErrHeld.
func (e *HeldError) Unwrap() error { return ErrHeld }

func (e *HeldError) reason() string {
	return fmt.Sprintf("%d of %d memory files", e.Files, e.Of)
}

// runWindow is how long after a session's last command on main its next one
// still belongs to the same run.
const runWindow = time.Hour

// run is what an agent's session deleted or emptied in its run of commands
// so far, with the command at hand: files, of the of files the memory held
// when the run began; now is what the command at hand itself deletes.
type run struct {
	files, of, now int
}

// over tells whether the command at hand, which deletes something, takes
// its run past the limits.
func (r run) over(l Limits) bool {
	return r.now > 0 && (r.files > l.MassDeleteFiles || r.files >= 3 && r.files*100 > r.of*l.MassDeleteShare)
}

// limit names the limit r passes.
func (r run) limit(l Limits) string {
	if r.files > l.MassDeleteFiles {
		return fmt.Sprintf("%d files", l.MassDeleteFiles)
	}
	return fmt.Sprintf("%d%% of the memory", l.MassDeleteShare)
}

// message adds the run to a commit's trailers, while it has deleted
// anything.
func (r run) message(_ *string, trs *[]trailer) {
	if r.files > 0 {
		*trs = append(*trs, trailer{trRunDeleted, fmt.Sprintf("%d of %d", r.files, r.of)})
	}
}

// runWith is the run of meta's session (its Agent and Session) with the
// change tx staged on snap: it goes on from the head commit when that is the
// same session's, made within runWindow, and says how far its run went.
func (v *Vault) runWith(ctx context.Context, snap *Snapshot, meta Meta, tx *Tx) (run, error) {
	r := run{now: tx.emptied}
	for _, e := range tx.removed {
		if !e.IsDir() {
			r.now++
			continue
		}
		u, err := v.treeUsage(ctx, tx.names, Root, e.Hash, false)
		if err != nil {
			return r, err
		}
		r.now += u.Files
	}
	if !snap.commit.IsZero() {
		c, err := v.repo.ReadCommit(snap.commit)
		if err != nil {
			return r, fmt.Errorf("vault: %w", err)
		}
		if v.opts.Now().Sub(c.Committer.When) < runWindow {
			if msg, err := v.openedMessage(c); err == nil && msg != "" {
				_, trs := parseMessage(msg)
				if trailerValue(trs, trAgent) == oneLine(meta.Agent) && trailerValue(trs, trSession) == oneLine(meta.Session) {
					r.files, r.of = parseRun(trailerValue(trs, trRunDeleted))
				}
			}
		}
	}
	if r.of == 0 {
		if r.now == 0 {
			return r, nil
		}
		n, err := snap.FileCount(ctx)
		if err != nil {
			return r, err
		}
		r.of = n
	}
	r.files += r.now
	return r, nil
}

// parseRun reads a trRunDeleted value, "N of T"; zeros when it is not one.
func parseRun(s string) (files, of int) {
	a, b, ok := strings.Cut(s, " of ")
	n, err1 := strconv.Atoi(a)
	t, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 0 || t <= 0 {
		return 0, 0
	}
	return n, t
}
