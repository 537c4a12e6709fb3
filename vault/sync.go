package vault

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
	"github.com/memvault/memvault/vault/keys"
)

// SyncMode says which ways Sync goes.
type SyncMode int

// The ways a sync goes.
const (
	SyncBoth SyncMode = iota // fetch, merge or fast-forward, push
	SyncPull                 // fetch, merge or fast-forward
	SyncPush                 // fetch to check, then push when the remote is behind
)

// DefaultRemote is the remote Sync uses when none is named.
const DefaultRemote = "origin"

// SyncOptions configure Sync.
type SyncOptions struct {
	Remote           string // "" means DefaultRemote
	Mode             SyncMode
	Auth             Credentials
	Progress         io.Writer // the server's progress; nil for none
	AcceptRecipients bool      // take a change of recipients made on the remote
	AcceptWriters    bool      // take a change of writers made on the remote
	// AcceptRemoved takes commits signed by a writer this vault removed
	// that no current writer vouched for (ErrRemovedWriter): for a
	// person who looked at them and wants that work; this clone's merge then
	// vouches for it.
	AcceptRemoved bool
	// AcceptFork merges a remote that went back to an older point of the
	// history and grew other commits there (ErrFork), once a person
	// has looked at them.
	AcceptFork bool
	// SkipRefused merges a remote whose history holds entries admission
	// refuses, leaving those entries out and naming them (see skip.go here and in package vault).
	SkipRefused bool
	Host        string // names this machine in conflict markers; "" means the host name
}

// SyncResult says what Sync did.
type SyncResult struct {
	Action    string   // "up to date", "fast-forward", "merge", "push" or "pull" (nothing to push)
	Head      string   // the vault's main branch afterwards
	Pushed    bool     // the remote now holds Head
	Conflicts []string // memory files left with conflict markers, or moved aside from a directory
	// MovedAside are the Conflicts that are files moved aside, to a new name,
	// because the other side made their name a directory.
	MovedAside []string
	// RecipientsChanged is set when taking the remote's history would change
	// the set of keys this clone's recipients hold: RecipientsAdded and
	// RecipientsRemoved are then the keys it adds (a key this clone removed
	// that the remote brings back included) and removes, computed on the
	// resulting set, never by lines. Comments, order and blank lines are no
	// change.
	RecipientsChanged bool
	RecipientsAdded   []keys.Recipient
	RecipientsRemoved []keys.Recipient
	// WritersAdded and WritersRemoved are the keys a change of writers the
	// remote made adds to and removes from this clone's writers, computed on
	// the resulting set.
	WritersAdded   []keys.Writer
	WritersRemoved []keys.Writer
	// LeftOut are the refused entries a SkipRefused merge left out.
	LeftOut []Refusal
	// WentBack is set when the remote no longer holds what this clone last
	// pushed to it or fetched from it: its branch was put back, or replaced.
	// Seen is that commit; the remote's branch is now at Found (ZeroHash: it
	// is gone). Pushed then says whether this sync put it back.
	WentBack    bool
	Seen, Found string
}

// Sync brings the vault and a remote together: it fetches the remote's main
// branch, fast-forwards when the vault is behind, merges on plaintext when the two
// diverged (one merge commit with both parents; overlapping edits stay in the file
// between conflict markers and are named in the result and the commit's trailers),
// and pushes. A push the remote rejects because its branch moved meanwhile
// (another clone pushed first) starts another round of fetch, merge and push,
// after a random back-off that grows with each rejection (said on
// opts.Progress); only ctx bounds the rounds, so give it a deadline. Writers of
// the vault are held off only while the branch moves; a commit that lands
// meanwhile is merged in a further round.
//
// The error wraps ErrRecipientsChanged when taking the remote's history would
// change the set of recipients this clone holds and AcceptRecipients is not
// set (ErrWritersChanged likewise for the writers), ErrBehind for a push that would need a merge, and
// ErrNoRemote, ErrUnreachable or ErrAuth from the transfer. When ctx's deadline
// passes, whichever step it stops (the fetch, the wait for the vault's lock, the
// admission check, the merge, the push), the error wraps ErrTimeout, and also
// ErrRejected when the remote kept moving; when ctx is cancelled, it wraps
// context.Canceled. It wraps ErrRefused when the remote's history holds entries
// memvault does not admit and SkipRefused is not set; nothing moved then. The vault's branch
// is left as it was, or at a complete merge, never in between.
func (v *Vault) Sync(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	return storeOf(v).sync(ctx, opts)
}

func (v *store) sync(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	if opts.Remote == "" {
		opts.Remote = DefaultRemote
	}
	topts := opts.Auth.transfer(opts.Progress)
	var res SyncResult
	// What this clone last pushed to or fetched from the remote: a remote
	// that no longer holds it went backwards, which memvault never does (its
	// history is never rewritten), so the host or someone with its keys did.
	seen, err := v.repo.Ref(gitlog.RemoteRef(opts.Remote))
	if err != nil {
		return res, fmt.Errorf("vault: sync: %w", err)
	}
	checked := false
	err = retryRounds(ctx, opts.Progress, func() error {
		before, err := v.repo.Ref(gitlog.RemoteRef(opts.Remote))
		if err != nil {
			return fmt.Errorf("vault: sync: %w", err)
		}
		theirs, err := v.repo.Fetch(ctx, opts.Remote, topts)
		if err != nil {
			return fmt.Errorf("vault: sync: %w", err)
		}
		if !checked {
			checked = true
			if err := v.checkWentBack(ctx, seen, theirs, &res); err != nil {
				return err
			}
			if err := v.refuseFork(ctx, opts, theirs, &res); err != nil {
				v.unfetch(ctx, opts.Remote, theirs, before)
				return err
			}
		}
		done, err := v.syncRound(ctx, opts, topts, theirs, &res)
		if err != nil && done {
			v.unfetch(ctx, opts.Remote, theirs, before)
		}
		return err
	})
	return res, timedOut(ctx, err)
}

// unfetch puts the remote-tracking ref of remote back from theirs, where the
// fetch put it, to before, when the sync took nothing of theirs (a refusal,
// a change waiting for a person): what this clone saw of the remote is what
// it took, so the next sync judges the same commits again, and a remote that
// goes back to what it held before is no fork. Best effort: a ref another
// sync moved meanwhile is left alone.
func (v *store) unfetch(ctx context.Context, remote string, theirs, before gitlog.Hash) {
	if theirs == before {
		return
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return
	}
	defer w.Unlock()
	w.UpdateRef(gitlog.RemoteRef(remote), theirs, before)
}

// syncRound does one fetch's worth of Sync. done is false when the round must be
// repeated: the local branch or the remote moved.
func (v *store) syncRound(ctx context.Context, opts SyncOptions, topts gitlog.TransferOptions, theirs gitlog.Hash, res *SyncResult) (done bool, err error) {
	ours, err := v.repo.Head()
	if err != nil {
		return true, fmt.Errorf("vault: sync: %w", err)
	}
	base := theirs
	if !theirs.IsZero() && theirs != ours {
		if base, err = v.repo.MergeBase(ctx, ours, theirs); err != nil {
			return true, fmt.Errorf("vault: sync: %w", err)
		}
		if base.IsZero() {
			return true, fmt.Errorf("vault: sync with %s: %w", opts.Remote, errNoBase)
		}
	}
	head := ours
	switch {
	case base == theirs: // up to date, or ahead
		if res.Action == "" {
			res.Action = "up to date"
		}
	case opts.Mode == SyncPush:
		return true, fmt.Errorf("vault: push to %s: %w", opts.Remote, ErrBehind)
	default:
		refused, err := v.v.admitArrived(ctx, base, theirs, opts.AcceptRemoved)
		if err == nil {
			refused, err = v.refusedOnArrival(ctx, ours, theirs, refused)
		}
		if err != nil || len(refused) > 0 {
			// A sealed tree whose key this identity no longer opens: say
			// what that means rather than refuse each tree.
			if reader, rerr := v.v.readerAt(theirs); rerr == nil && !reader {
				return true, fmt.Errorf("vault: sync with %s: the remote's vault no longer lists this identity among its readers (it was removed): nothing moved, and what this clone wrote stays here: %w",
					opts.Remote, ErrNotRecipient)
			}
		}
		if err != nil {
			return true, fmt.Errorf("vault: sync: %w", err)
		}
		if len(refused) > 0 && !opts.SkipRefused {
			return true, refusedError("sync with "+opts.Remote, refused)
		}
		if err := v.checkRecipients(base, ours, theirs, opts.AcceptRecipients, res); err != nil {
			return true, err
		}
		if err := v.checkWriters(base, ours, theirs, opts.AcceptWriters, res); err != nil {
			return true, err
		}
		if len(refused) > 0 {
			head, err = v.integrateSkipping(ctx, opts, base, ours, theirs, refused, res)
		} else {
			head, err = v.integrate(ctx, opts, base, ours, theirs, res)
		}
		if err != nil {
			return false, err
		}
	}
	res.Head = head.String()
	if opts.Mode == SyncPull || head == theirs {
		res.Pushed = head == theirs
		return true, nil
	}
	if err := v.repo.Push(ctx, opts.Remote, head, topts); err != nil {
		return false, fmt.Errorf("vault: sync: %w", err)
	}
	res.Pushed = true
	if res.Action == "up to date" {
		res.Action = "push"
	}
	return true, nil
}

// checkWentBack says in res whether the remote, now at theirs, no longer
// holds seen, what this clone last pushed to or fetched from it.
func (v *store) checkWentBack(ctx context.Context, seen, theirs gitlog.Hash, res *SyncResult) error {
	if seen.IsZero() || seen == theirs {
		return nil
	}
	if !theirs.IsZero() {
		mb, err := v.repo.MergeBase(ctx, seen, theirs)
		if err != nil {
			return fmt.Errorf("vault: sync: %w", err)
		}
		if mb == seen {
			return nil // it moved on from there
		}
	}
	res.WentBack, res.Seen, res.Found = true, seen.String(), theirs.String()
	return nil
}

// refuseFork refuses, unless opts.AcceptFork, a remote that went back (see
// checkWentBack) and grew commits this clone never held on the older point:
// a fork, which a host or a removed writer can make, and which no merge
// should take before a person looked. The caller puts the remote-tracking
// ref back, so the next sync sees the same fork and says so again.
func (v *store) refuseFork(ctx context.Context, opts SyncOptions, theirs gitlog.Hash, res *SyncResult) error {
	if !res.WentBack || theirs.IsZero() || opts.AcceptFork {
		return nil
	}
	ours, err := v.repo.Head()
	if err != nil {
		return fmt.Errorf("vault: sync: %w", err)
	}
	mb, err := v.repo.MergeBase(ctx, theirs, ours)
	if err != nil {
		return fmt.Errorf("vault: sync: %w", err)
	}
	if mb == theirs {
		return nil // it only went back: this clone holds all it has
	}
	return fmt.Errorf("vault: sync with %s: the remote no longer holds %s, which this clone saw there, and holds commits this clone never held on an older point (now at %s); nothing moved: %w",
		opts.Remote, res.Seen, theirs, ErrFork)
}

// refusedOnArrival adds to refused (what admission refused in the commits
// that arrived) what it would refuse in theirs's tree, the tree main would
// take, judged against ours's, the tree this clone holds and admitted.
// Admission skips an entry that is the same as in a parent, and a parent may
// be a commit this clone refused and left out: a merge of it with this
// clone's head would bring back what was left out. An entry refused at a path
// admission already named is not named twice.
func (v *store) refusedOnArrival(ctx context.Context, ours, theirs gitlog.Hash, refused []Refusal) ([]Refusal, error) {
	if skipAdmission.Load() || skipArrivalTree.Load() {
		return refused, nil
	}
	oursT, err := v.repo.RootTree(ours)
	if err != nil {
		return nil, err
	}
	theirsT, err := v.repo.RootTree(theirs)
	if err != nil {
		return nil, err
	}
	now, err := v.v.refusedInTree(ctx, theirs, theirsT, oursT)
	if err != nil {
		return nil, err
	}
	return addRefusals(refused, now), nil
}

// integrate fast-forwards to theirs or merges it, and returns the new head. The
// error wraps gitlog.ErrStale when the branch moved meanwhile.
func (v *store) integrate(ctx context.Context, opts SyncOptions, base, ours, theirs gitlog.Hash, res *SyncResult) (gitlog.Hash, error) {
	if base == ours {
		w, err := v.repo.Lock(ctx)
		if err != nil {
			return ours, fmt.Errorf("vault: %w", err)
		}
		defer w.Unlock()
		if err := w.UpdateRef(gitlog.Branch, ours, theirs); err != nil {
			return ours, fmt.Errorf("vault: fast-forward: %w", err)
		}
		res.Action = "fast-forward"
		return theirs, nil
	}
	return v.merge(ctx, opts, base, ours, theirs, gitlog.ZeroHash, nil, res)
}

// merge commits the merge of theirs into ours, theirs's tree taken to be
// theirsT unless that is ZeroHash, the entries left out of it (refused) named
// in the message, and returns the new head.
func (v *store) merge(ctx context.Context, opts SyncOptions, base, ours, theirs, theirsT gitlog.Hash, refused []Refusal, res *SyncResult) (gitlog.Hash, error) {
	labels, err := v.mergeLabels(opts, ours, theirs)
	if err != nil {
		return ours, err
	}
	changes, conflicts, aside, err := v.planMerge(ctx, base, ours, theirs, theirsT, labels)
	if err != nil {
		return ours, err
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return ours, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	info, err := v.mergeInfo(opts.Remote, conflicts, ours, theirs)
	if err != nil {
		return ours, err
	}
	info.Message = withLeftOut(info.Message, refused)
	h, err := v.commitIntegration(w, base, ours, theirs, changes, info)
	if err != nil {
		return ours, err
	}
	res.Action, res.Conflicts, res.MovedAside, res.LeftOut = "merge", conflicts, aside, refused
	return h, nil
}

// commitIntegration commits a sync's merge of ours and theirs. When the
// remote removed a recipient, this clone's own commits since base were
// encrypted to it too, and a merge would push them as a parent the removed
// key could read: the merge's content (re-encrypted to the recipients now)
// goes on top of theirs alone instead, named in a Memory-Squashed trailer.
// So too when the remote converted the vault to the sealed format and this
// clone's own commits are plain: pushed as a parent, they would show the host
// the names and messages the conversion hides.
func (v *store) commitIntegration(w *gitlog.Writer, base, ours, theirs gitlog.Hash, changes []gitlog.Change, info gitlog.CommitInfo) (gitlog.Hash, error) {
	parents := []gitlog.Hash{ours, theirs}
	if held, err := v.v.heldFromRemoved(context.Background(), base, ours, theirs); err != nil {
		return ours, err
	} else if held {
		// Every clone that knows of the removal refuses those commits: their
		// content goes on top of theirs, signed by this writer.
		parents = []gitlog.Hash{theirs}
		info.Message += trSquashed + ": local commits since " + base.String() + ", some by a writer the remote removed, taken up by this writer\n"
	} else if removed, err := v.recipientRemoved(base, theirs); err != nil {
		return ours, err
	} else if removed {
		parents = []gitlog.Hash{theirs}
		info.Message += trSquashed + ": local commits since " + base.String() + ", re-encrypted without the removed recipients\n"
	} else if converted, err := v.sealedSince(ours, theirs); err != nil {
		return ours, err
	} else if converted {
		parents = []gitlog.Hash{theirs}
		info.Message += trSquashed + ": local commits since " + base.String() + ", sealed after the vault's conversion to the sealed format\n"
	}
	// A sealed vault's merge seals its message with the key its tree holds.
	if err := v.v.sealInfo(ours, changes, &info); err != nil {
		return ours, err
	}
	info.Parents = parents
	h, err := w.Commit(context.Background(), ours, changes, info)
	if err != nil {
		return ours, fmt.Errorf("vault: merge: %w", err)
	}
	return h, nil
}

// recipientRemoved says whether theirs removed a recipient that base had.
func (v *store) recipientRemoved(base, theirs gitlog.Hash) (bool, error) {
	var files [2]*keys.RecipientsFile
	for i, c := range []gitlog.Hash{base, theirs} {
		content, err := v.v.recipientsAt(c)
		if err != nil {
			return false, fmt.Errorf("vault: sync: %w", err)
		}
		if files[i], err = keys.ParseRecipientsFile(content); err != nil {
			return false, fmt.Errorf("vault: sync: %w", err)
		}
	}
	for _, e := range files[0].Entries {
		if files[1].Index(e.Key) < 0 {
			return true, nil
		}
	}
	return false, nil
}

// mergeLabels names the sides in conflict markers: "ours (host, time)".
func (v *store) mergeLabels(opts SyncOptions, ours, theirs gitlog.Hash) (textdiff.Labels, error) {
	host := opts.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	when := func(h gitlog.Hash) (string, error) {
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return "", fmt.Errorf("vault: merge: %w", err)
		}
		return c.Committer.When.UTC().Format(time.RFC3339), nil
	}
	ot, err := when(ours)
	if err != nil {
		return textdiff.Labels{}, err
	}
	tt, err := when(theirs)
	if err != nil {
		return textdiff.Labels{}, err
	}
	return textdiff.Labels{
		Ours:   fmt.Sprintf("ours (%s, %s)", oneLine(host), ot),
		Base:   "base",
		Theirs: fmt.Sprintf("theirs (%s, %s)", oneLine(opts.Remote), tt),
	}, nil
}

// mergeInfo is the merge commit's message: trailers Memory-Command: merge and one
// Memory-Conflict per conflicted file.
func (v *store) mergeInfo(remote string, conflicts []string, ours, theirs gitlog.Hash) (gitlog.CommitInfo, error) {
	trailers := []trailer{{trCommand, "merge"}}
	for _, p := range conflicts {
		trailers = append(trailers, trailer{trConflict, p})
	}
	now := v.v.opts.Now()
	sign, err := v.v.signerFor(ours, theirs)
	return gitlog.CommitInfo{
		Message:   formatMessage("merge "+remote+"/main", trailers),
		Author:    gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
		Committer: gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
		Sign:      sign,
	}, err
}

// checkRecipients refuses, unless accept, a fast-forward or merge whose
// recipients differ, as a set of keys, from those ours holds now, and says in
// res which keys it adds and removes. The result is computed as the merge
// computes it (mergedRecipients), never by lines, and compared with ours,
// never with the base: a remote that repeats the line of a key ours removed
// brings that key back, and says so. Comments, order and blank lines are no
// change: a comment is the remote's to write, and decides nothing.
func (v *store) checkRecipients(base, ours, theirs gitlog.Hash, accept bool, res *SyncResult) error {
	var fs [3]*keys.RecipientsFile
	for i, c := range []gitlog.Hash{base, ours, theirs} {
		content, err := v.v.recipientsAt(c)
		if err == nil {
			fs[i], err = keys.ParseRecipientsFile(content)
		}
		if err != nil {
			return fmt.Errorf("vault: sync: the recipients of %s: %w", c, err)
		}
	}
	now := fs[2]
	if base != ours {
		now = mergedRecipients(fs[0], fs[1], fs[2])
	}
	added, removed := keysMissing(fs[1], now), keysMissing(now, fs[1])
	if len(added)+len(removed) == 0 {
		return nil
	}
	res.RecipientsChanged = true
	res.RecipientsAdded, res.RecipientsRemoved = added, removed
	if accept {
		return nil
	}
	return fmt.Errorf("vault: sync: %w; nothing was changed", ErrRecipientsChanged)
}

// mergedRecipients is the recipients file a merge makes, as keys, never as
// lines: ours's file, without the keys theirs removed since base, with the
// keys theirs added since base (and ours lacks) after them, each once with
// the comment lines above it.
func mergedRecipients(base, ours, theirs *keys.RecipientsFile) *keys.RecipientsFile {
	out := &keys.RecipientsFile{Header: ours.Header, Trailer: ours.Trailer}
	for _, e := range ours.Entries {
		if base.Index(e.Key) < 0 || theirs.Index(e.Key) >= 0 {
			out.Entries = append(out.Entries, e)
		}
	}
	for _, e := range theirs.Entries {
		if base.Index(e.Key) < 0 && out.Index(e.Key) < 0 {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// keysMissing returns the recipients of b whose keys a lacks, each once.
func keysMissing(a, b *keys.RecipientsFile) []keys.Recipient {
	var out []keys.Recipient
	seen := map[string]bool{}
	for _, e := range b.Entries {
		if a.Index(e.Key) < 0 && !seen[e.Key] {
			seen[e.Key] = true
			out = append(out, e.Recipient)
		}
	}
	return out
}
