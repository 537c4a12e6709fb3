package vault

import (
	"bytes"
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
	// SkipRefused merges a remote whose history holds entries admission
	// refuses, leaving those entries out and naming them (see skip.go).
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
	// RecipientsChanged is set when the remote changed .memvault/recipients.
	// RecipientsAdded and RecipientsRemoved are then the keys the remote's
	// change adds and removes, as sets of keys (comments, order and blank
	// lines aside); both are empty when it changed only those.
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
// The error wraps ErrRecipientsChanged when the remote changed the recipients and
// AcceptRecipients is not set, ErrBehind for a push that would need a merge, and
// ErrNoRemote, ErrUnreachable or ErrAuth from the transfer. When ctx's deadline
// passes, whichever step it stops (the fetch, the wait for the vault's lock, the
// admission check, the merge, the push), the error wraps ErrTimeout, and also
// ErrRejected when the remote kept moving; when ctx is cancelled, it wraps
// context.Canceled. It wraps ErrRefused when the remote's history holds entries
// memvault does not admit and SkipRefused is not set; nothing moved then. The vault's branch
// is left as it was, or at a complete merge, never in between.
func (v *Vault) Sync(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	if opts.Remote == "" {
		opts.Remote = DefaultRemote
	}
	topts := gitlog.TransferOptions{Auth: opts.Auth.auth(), Progress: opts.Progress}
	var res SyncResult
	err := retryRounds(ctx, opts.Progress, func() error {
		theirs, err := v.repo.Fetch(ctx, opts.Remote, topts)
		if err != nil {
			return fmt.Errorf("vault: sync: %w", err)
		}
		_, err = v.syncRound(ctx, opts, topts, theirs, &res)
		return err
	})
	return res, timedOut(ctx, err)
}

// syncRound does one fetch's worth of Sync. done is false when the round must be
// repeated: the local branch or the remote moved.
func (v *Vault) syncRound(ctx context.Context, opts SyncOptions, topts gitlog.TransferOptions, theirs gitlog.Hash, res *SyncResult) (done bool, err error) {
	ours, err := v.repo.Head()
	if err != nil {
		return true, fmt.Errorf("vault: sync: %w", err)
	}
	base := theirs
	if !theirs.IsZero() && theirs != ours {
		if base, err = v.repo.MergeBase(ours, theirs); err != nil {
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
		refused, err := admit(ctx, v.repo, v.limits, base, theirs)
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

// integrate fast-forwards to theirs or merges it, and returns the new head. The
// error wraps gitlog.ErrStale when the branch moved meanwhile.
func (v *Vault) integrate(ctx context.Context, opts SyncOptions, base, ours, theirs gitlog.Hash, res *SyncResult) (gitlog.Hash, error) {
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
	labels, err := v.mergeLabels(opts, ours, theirs)
	if err != nil {
		return ours, err
	}
	changes, conflicts, aside, err := v.planMerge(ctx, base, ours, theirs, labels)
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
	h, err := v.commitIntegration(w, base, ours, theirs, changes, info)
	if err != nil {
		return ours, err
	}
	res.Action, res.Conflicts, res.MovedAside = "merge", conflicts, aside
	return h, nil
}

// commitIntegration commits a sync's merge of ours and theirs. When the
// remote removed a recipient, this clone's own commits since base were
// encrypted to it too, and a merge would push them as a parent the removed
// key could read: the merge's content (re-encrypted to the recipients now)
// goes on top of theirs alone instead, named in a Memory-Squashed trailer.
func (v *Vault) commitIntegration(w *gitlog.Writer, base, ours, theirs gitlog.Hash, changes []gitlog.Change, info gitlog.CommitInfo) (gitlog.Hash, error) {
	commit := w.CommitMerge
	if removed, err := v.recipientRemoved(base, theirs); err != nil {
		return ours, err
	} else if removed {
		commit = w.CommitSquash
		info.Message += trSquashed + ": local commits since " + base.String() + ", re-encrypted without the removed recipients\n"
	}
	h, err := commit(ours, theirs, changes, info)
	if err != nil {
		return ours, fmt.Errorf("vault: merge: %w", err)
	}
	return h, nil
}

// recipientRemoved says whether theirs removed a recipient that base had.
func (v *Vault) recipientRemoved(base, theirs gitlog.Hash) (bool, error) {
	var files [2]*keys.RecipientsFile
	for i, c := range []gitlog.Hash{base, theirs} {
		s, err := v.snapshotAt(c)
		if err != nil {
			return false, fmt.Errorf("vault: sync: %w", err)
		}
		content, err := s.recipientsContent()
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
func (v *Vault) mergeLabels(opts SyncOptions, ours, theirs gitlog.Hash) (textdiff.Labels, error) {
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
func (v *Vault) mergeInfo(remote string, conflicts []string, ours, theirs gitlog.Hash) (gitlog.CommitInfo, error) {
	trailers := []trailer{{trCommand, "merge"}}
	for _, p := range conflicts {
		trailers = append(trailers, trailer{trConflict, p})
	}
	now := v.opts.Now()
	sign, err := v.signerFor(ours, theirs)
	return gitlog.CommitInfo{
		Message:   formatMessage("merge "+remote+"/main", trailers),
		Author:    gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
		Committer: gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
		Sign:      sign,
	}, err
}

// checkRecipients refuses, unless accept, a recipients file that theirs changed
// since base to something ours does not hold, and says in res which keys the
// remote's change adds and removes. Those come from the parsed files, never
// from their text: a comment is the remote's to write.
func (v *Vault) checkRecipients(base, ours, theirs gitlog.Hash, accept bool, res *SyncResult) error {
	read := func(c gitlog.Hash) ([]byte, error) {
		s, err := v.snapshotAt(c)
		if err != nil {
			return nil, err
		}
		return s.recipientsContent()
	}
	var rs [3][]byte
	for i, c := range []gitlog.Hash{base, ours, theirs} {
		var err error
		if rs[i], err = read(c); err != nil {
			return fmt.Errorf("vault: sync: %w", err)
		}
	}
	if bytes.Equal(rs[0], rs[2]) || bytes.Equal(rs[1], rs[2]) {
		return nil
	}
	was, err := keys.ParseRecipientsFile(rs[0])
	if err != nil {
		return fmt.Errorf("vault: sync: the recipients before the remote's change: %w", err)
	}
	now, err := keys.ParseRecipientsFile(rs[2])
	if err != nil {
		return fmt.Errorf("vault: sync: the remote's recipients: %w", err)
	}
	res.RecipientsChanged = true
	res.RecipientsAdded, res.RecipientsRemoved = keysMissing(was, now), keysMissing(now, was)
	if accept {
		return nil
	}
	return fmt.Errorf("vault: sync: %w; nothing was changed", ErrRecipientsChanged)
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
