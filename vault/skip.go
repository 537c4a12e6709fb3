package vault

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/memvault/memvault/gitlog"
)

// A way forward that loses nothing good. When sync refuses what a remote
// brought (admit.go), the vault must not be stuck for good: SyncOptions.
// SkipRefused merges the remote's history anyway, in one merge commit whose
// tree takes every admissible change of the remote and leaves each refused
// entry out (the base's version stays, or nothing), and names each refusal in
// a Memory-Left-Out trailer. The next push puts that clean head on the remote.
// The refused objects stay in the history, as history is never rewritten, but
// no read trusts them (badentry.go), and fsck counts an entry a left-out
// trailer names as dealt with. fsck --repair does the same for a vault whose
// own branch holds bad entries (LeaveOutRefused).

// trLeftOut names an entry a merge or repair left out: "COMMIT "PATH": reason".
const trLeftOut = "Memory-Left-Out"

// leftOutValue is the value of r's Memory-Left-Out trailer.
func leftOutValue(r Refusal) string {
	return r.Commit.String() + " " + strconv.Quote(r.Path) + ": " + oneLine(r.Reason)
}

// leftOutKey is what identifies r among left-out entries: its commit and path.
func leftOutKey(r Refusal) string { return r.Commit.String() + " " + strconv.Quote(r.Path) }

// leftOutKeyOf reads the key back from a trailer's value.
func leftOutKeyOf(v string) (string, bool) {
	c, rest, ok := strings.Cut(v, " ")
	if !ok {
		return "", false
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	return c + " " + q, true
}

// withLeftOut adds a Memory-Left-Out trailer for each of rs to a message.
func withLeftOut(msg string, rs []Refusal) string {
	var b strings.Builder
	b.WriteString(msg)
	for _, r := range rs {
		b.WriteString(trLeftOut + ": " + leftOutValue(r) + "\n")
	}
	return b.String()
}

// refusedIn checks tree (of commit c) against the tree base, as admission
// checks a commit against its parent: the entries of tree that differ from
// base's and would be refused.
func refusedIn(ctx context.Context, repo *gitlog.Repo, limits Limits, openKey keyOpener, c, tree, base gitlog.Hash) ([]Refusal, error) {
	a := &admission{ctx: ctx, repo: repo, limits: limits, seen: map[gitlog.Hash]bool{}}
	a.openKey = openKey
	var parents []gitlog.Hash
	if !base.IsZero() {
		parents = []gitlog.Hash{base}
	}
	if err := a.tree(c, "", nil, tree, parents); err != nil {
		return nil, err
	}
	return a.refused, nil
}

// leaveOut writes tree with each refused entry replaced by the entry base
// holds at the same names, or removed where base holds none, and returns it.
func (v *Vault) leaveOut(ctx context.Context, tree, base gitlog.Hash, rs []Refusal) (gitlog.Hash, error) {
	var repl []gitlog.Replacement
	for _, r := range rs {
		e, err := entryAt(v.repo, base, r.names)
		if err != nil {
			return gitlog.ZeroHash, err
		}
		repl = append(repl, gitlog.Replacement{Names: r.names, Entry: e})
	}
	h, err := v.repo.ReplaceEntries(ctx, tree, repl)
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: leave out refused entries: %w", err)
	}
	return h, nil
}

// entryAt is the entry tree root reaches through names, or nil.
func entryAt(repo *gitlog.Repo, root gitlog.Hash, names []string) (*gitlog.Entry, error) {
	e := gitlog.Entry{Hash: root, Mode: dirMode}
	for _, name := range names {
		if !e.IsDir() || e.Hash.IsZero() {
			return nil, nil
		}
		es, err := repo.ReadTree(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("vault: leave out refused entries: %w", err)
		}
		found := false
		for _, x := range es {
			if x.Name == name {
				e, found = x, true
				break
			}
		}
		if !found {
			return nil, nil
		}
	}
	return &e, nil
}

// leftOutKeys gathers the entries the Memory-Left-Out trailers of every
// commit reachable from head name: in a sealed tree, those of a message that
// opens under its key, as memvault writes them.
func (v *Vault) leftOutKeys(ctx context.Context, head gitlog.Hash) (map[string]bool, error) {
	keys := map[string]bool{}
	err := eachCommit(ctx, v.repo, head, func(c *gitlog.Commit) error {
		msg, err := v.openedMessage(c)
		if err != nil {
			return err
		}
		if !strings.Contains(msg, trLeftOut+": ") {
			return nil
		}
		_, trs := parseMessage(msg)
		for _, t := range trs {
			if t.key != trLeftOut {
				continue
			}
			if k, ok := leftOutKeyOf(t.value); ok {
				keys[k] = true
			}
		}
		return nil
	})
	return keys, err
}

// historyRefusals checks the whole history from head as admission checks what
// arrives, and returns what it refuses, without what a Memory-Left-Out trailer
// already names, and what head's own tree holds that would be refused, which
// no trailer silences: a trailer says an entry was left out, and an entry
// still in the tree was not (a merge with a refused commit brings its
// entries back as "the same as in a parent").
func (v *Vault) historyRefusals(ctx context.Context, head gitlog.Hash) ([]Refusal, error) {
	rs, err := admitting(ctx, v.repo, v.limits, v.admitKey(head), gitlog.ZeroHash, head, nil, trustRules{})
	if err != nil {
		return nil, err
	}
	done, err := v.leftOutKeys(ctx, head)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	out := rs[:0]
	for _, r := range rs {
		if !done[leftOutKey(r)] {
			out = append(out, r)
		}
	}
	tree, err := v.repo.RootTree(head)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	now, err := refusedIn(ctx, v.repo, v.limits, v.admitKey(head), head, tree, gitlog.ZeroHash)
	if err != nil {
		return nil, err
	}
	return addRefusals(out, now), nil
}

// LeaveOutRefused is fsck --repair's way forward for a vault whose history
// holds entries memvault does not admit (changed by hand, or filled before
// sync checked what arrives): one commit whose tree is the current one without
// the refused entries it holds, naming every refused entry of the history in a
// Memory-Left-Out trailer, after which fsck finds nothing more to say of them.
// Nothing else changes and nothing is deleted from the history. It returns the
// entries named, none when there was nothing to do.
func (v *Vault) LeaveOutRefused(ctx context.Context) ([]Refusal, error) {
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	head, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	rs, err := v.historyRefusals(ctx, head)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	tree, err := v.repo.RootTree(head)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	now, err := refusedIn(ctx, v.repo, v.limits, v.admitKey(head), head, tree, gitlog.ZeroHash)
	if err != nil {
		return nil, err
	}
	clean, err := v.leaveOut(ctx, tree, gitlog.ZeroHash, now)
	if err != nil {
		return nil, err
	}
	when := v.opts.Now()
	sig := gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: when}
	msg := withLeftOut(formatMessage(fmt.Sprintf("repair: leave out %d entries memvault does not read", len(rs)),
		[]trailer{{trCommand, "repair"}}), rs)
	sign, err := v.signerFor(head)
	if err != nil {
		return nil, err
	}
	info := gitlog.CommitInfo{Message: msg, Author: sig, Committer: sig, Sign: sign, Tree: clean}
	if err := v.sealInfo(head, nil, &info); err != nil { // a sealed vault's host reads no message
		return nil, err
	}
	if _, err := w.Commit(ctx, head, nil, info); err != nil {
		return nil, fmt.Errorf("vault: repair: %w", err)
	}
	return rs, nil
}

// String is the refused entry as fsck and sync print it: the commit, the path
// quoted as Go quotes it, and the reason.
func (r Refusal) String() string {
	return fmt.Sprintf("commit %s: %s: %s", r.Commit, strconv.Quote(r.Path), r.Reason)
}

// addRefusals adds to rs those of more at paths rs does not name.
func addRefusals(rs, more []Refusal) []Refusal {
	named := map[string]bool{}
	for _, r := range rs {
		named[r.Path] = true
	}
	for _, r := range more {
		if !named[r.Path] {
			rs = append(rs, r)
		}
	}
	return rs
}
