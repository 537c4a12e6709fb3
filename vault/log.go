package vault

import (
	"context"
	"fmt"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

// Log returns the vault's history, newest first: every commit (in git's
// --topo-order: each before its parents, by date among independent ones), or with opts.Path
// those that changed what is at that path (a file, or anything under a
// directory), following it back through the rename commands that moved it there.
// Since, Command and the pickaxe (Pickaxe, PickaxeRegexp) filter the records; Skip and Limit then page through them.
//
// A path's history compares the path's entry from commit to parent, never a
// whole tree diff, and reads only the commits that touched it (see
// gitlog.Repo.Walk with WalkOptions.Path). The error is a *PathError for an invalid path, ctx's
// error if it ends, or an I/O error.
func (v *Vault) Log(ctx context.Context, opts LogOptions) ([]Record, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, err
	}
	// The head's names, read first: a sealed vault's key is then known, and
	// a message in the clear is not believed in its trees (see record).
	ns, err := v.namesAt(head)
	if err != nil {
		return nil, err
	}
	tp := ""
	if opts.Path != "" {
		if tp, err = ns.treePath(opts.Path); err != nil {
			return nil, err
		}
	}
	l := newLogPage(v, opts)
	if tp == "" {
		return l.done(ctx, v.logAll(ctx, head, l))
	}
	return l.done(ctx, v.logPath(ctx, head, tp, ns.key() != nil, l))
}

// logAll hands l every commit from head, in --topo-order, until l's page is full.
func (v *Vault) logAll(ctx context.Context, head gitlog.Hash, l *logPage) error {
	return v.walkTopo(ctx, head, func(c *gitlog.Commit) error {
		r, err := v.record(c)
		if err != nil {
			return err
		}
		return stopWhenFull(l.keep(ctx, r, c, memDir))
	})
}

// logPath hands l the commits from head that changed what is at the tree
// path tp, following it back through renames, until l's page is full.
// sealed tells whether the head is sealed: a plain head's history is plain,
// since a vault becomes sealed and never plain again, so its commits need no
// look for a key.
func (v *Vault) logPath(ctx context.Context, head gitlog.Hash, tp string, sealed bool, l *logPage) error {
	return v.repo.Walk(ctx, head, gitlog.WalkOptions{Path: tp}, func(c *gitlog.Commit, p string) (string, error) {
		r, err := v.record(c)
		if err != nil {
			return p, err
		}
		var k *seal.Key
		if sealed {
			if k, err = v.sealKeyAt(c.TreeHash); err != nil {
				return p, err
			}
		}
		from := renamedFrom(v.codec(k), r, p)
		if from == p {
			from = v.pathInParent(c, k, p)
		}
		scope := p
		if from != p {
			scope = memDir // see the move whole, so that it is no change
		}
		if err := stopWhenFull(l.keep(ctx, r, c, scope)); err != nil {
			return p, err
		}
		return v.pathInParent(c, k, from), nil
	})
}

// stopWhenFull is the error that ends a walk: err, or gitlog.ErrStop once
// the page is full.
func stopWhenFull(full bool, err error) error {
	if err == nil && full {
		return gitlog.ErrStop
	}
	return err
}

// logPage gathers the records of one Log: it applies the filters, runs the
// pickaxe, and fills the page (Skip, Limit). The pickaxe decrypts both sides
// of each change: commits wait in a batch whose changes are read and
// decrypted together, on all cores, while the walk goes on to the next
// batch; batches then pass in order.
type logPage struct {
	v        *Vault
	opts     LogOptions
	px       *pickaxe      // nil without a pickaxe
	skip     int           // records still to pass over before the page
	out      []Record      // the page
	full     bool          // the page holds Limit records
	batch    []pickaxeItem // commits waiting for the pickaxe
	inFlight *pickaxeRun   // the batch the pickaxe reads now, or nil
}

func newLogPage(v *Vault, opts LogOptions) *logPage {
	l := &logPage{v: v, opts: opts, skip: opts.Skip}
	if opts.PickaxeRegexp != nil {
		l.px = &pickaxe{re: opts.PickaxeRegexp, quick: wholeText(opts.PickaxeRegexp)}
	} else if opts.Pickaxe != "" {
		l.px = &pickaxe{text: opts.Pickaxe}
	}
	return l
}

// keep applies the filters and the page to r, the record of c, the pickaxe
// looking at scope; it tells when the page is full.
func (l *logPage) keep(ctx context.Context, r Record, c *gitlog.Commit, scope string) (bool, error) {
	if !l.opts.Since.IsZero() && r.Time.Before(l.opts.Since) || l.opts.Command != "" && r.Command != l.opts.Command {
		return false, nil
	}
	if l.px == nil {
		return l.add(r), nil
	}
	l.batch = append(l.batch, pickaxeItem{rec: r, c: c, scope: scope})
	if len(l.batch) < pickaxeBatchSize {
		return false, nil
	}
	return l.flush(ctx)
}

// add adds a record that passed every filter to the page; it tells when the
// page is full.
func (l *logPage) add(r Record) bool {
	if l.skip > 0 {
		l.skip--
		return false
	}
	l.out = append(l.out, r)
	l.full = l.opts.Limit > 0 && len(l.out) >= l.opts.Limit
	return l.full
}

// finish waits for the batch in flight and pages its hits; it tells when
// the page is full.
func (l *logPage) finish() (bool, error) {
	run := l.inFlight
	if run == nil {
		return false, nil
	}
	l.inFlight = nil
	<-run.done
	if run.err != nil {
		return false, run.err
	}
	for i, it := range run.items {
		if run.hits[i] && l.add(it.rec) {
			return true, nil
		}
	}
	return false, nil
}

// flush finishes the batch in flight, then sets the waiting one running; it
// tells when the page is full.
func (l *logPage) flush(ctx context.Context) (bool, error) {
	if full, err := l.finish(); full || err != nil {
		return full, err
	}
	run := &pickaxeRun{items: l.batch, done: make(chan struct{})}
	l.batch = nil
	px := *l.px
	go func() {
		defer close(run.done)
		run.hits, run.err = l.v.pickaxeBatch(ctx, run.items, px)
	}()
	l.inFlight = run
	return false, nil
}

// done runs the last batch once the walk is over (err is the walk's), and
// checks the page's trailers against the trees.
func (l *logPage) done(ctx context.Context, err error) ([]Record, error) {
	if !l.full {
		if err == nil && l.px != nil && len(l.batch) > 0 {
			_, err = l.flush(ctx)
		}
		if _, ferr := l.finish(); err == nil { // also waits for a batch a full page left running
			err = ferr
		}
	} // else the page filled: nothing is in flight, and what waits is not wanted
	if err == nil {
		err = l.v.checkRecords(l.out)
	}
	return l.out, err
}

// LogOldest returns the n oldest records of the whole-vault history, newest
// first and checked as Log gives them, and how many commits the history holds
// in all: the end of the history and its length, as a history view's "bottom"
// needs them. It reads only the parents of the commits above those n (see
// gitlog's Parents: on an indexed history, none of them), so on a long history
// it costs a small part of Log's walk to the end. An n below 1 counts as 1.
func (v *Vault) LogOldest(ctx context.Context, n int) ([]Record, int, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, 0, err
	}
	n = max(n, 1)
	ring := make([]gitlog.Hash, n) // the last n commits met, ring[total%n] the oldest of them
	total := 0
	err = v.walkTopoShape(ctx, head, func(h gitlog.Hash) error {
		ring[total%n] = h
		total++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	k := min(n, total)
	out := make([]Record, 0, k)
	for i := total - k; i < total; i++ {
		c, err := v.repo.ReadCommit(ring[i%n])
		if err != nil {
			return nil, 0, err
		}
		r, err := v.record(c)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	if err := v.checkRecords(out); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// LogAround returns n records of the whole-vault history around the commit
// target (a full hash), newest first and checked as Log gives them: the window
// in which target sits in the middle (or as near it as the history's ends
// allow), where the window starts (how many records are newer), and how many
// commits the history holds. Like LogOldest it walks only the history's shape
// (see gitlog's Parents) and reads the records of the window alone, so a
// history view goes to any commit without reading every record above it. The
// error wraps ErrUnknownRevision when target is not in the history.
func (v *Vault) LogAround(ctx context.Context, target string, n int) ([]Record, int, int, error) {
	th, err := gitlog.ParseHash(target)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("vault: log around %q: %w", oneLine(target), ErrUnknownRevision)
	}
	head, err := v.repo.Head()
	if err != nil {
		return nil, 0, 0, err
	}
	n = max(n, 1)
	var hs []gitlog.Hash
	at := -1
	err = v.walkTopoShape(ctx, head, func(h gitlog.Hash) error {
		if h == th {
			at = len(hs)
		}
		hs = append(hs, h)
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if at < 0 {
		return nil, 0, 0, fmt.Errorf("vault: log around %s: not in the history of main: %w", th, ErrUnknownRevision)
	}
	start := min(max(at-n/2, 0), max(len(hs)-n, 0))
	end := min(start+n, len(hs))
	out := make([]Record, 0, end-start)
	for _, h := range hs[start:end] {
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return nil, 0, 0, err
		}
		r, err := v.record(c)
		if err != nil {
			return nil, 0, 0, err
		}
		out = append(out, r)
	}
	if err := v.checkRecords(out); err != nil {
		return nil, 0, 0, err
	}
	return out, start, len(hs), nil
}

// renamedFrom returns the tree path whose history continues that of tree path p
// before commit r: the old path if r is a rename that created p (moved it, or a
// directory holding it, there), else p.
func renamedFrom(ns codec, r Record, p string) string {
	if r.Command != "rename" || r.Path == "" || r.NewPath == "" {
		return p
	}
	to, err := ns.treePath(r.NewPath)
	if err != nil {
		return p
	}
	rest, ok := strings.CutPrefix(p, to)
	if !ok || rest != "" && !strings.HasPrefix(rest, "/") {
		return p
	}
	from, err := ns.treePath(r.Path)
	if err != nil || from == memDir {
		return p
	}
	if !ns.foldersBindNames() || rest == "" {
		return from + rest
	}
	// Sealed names below a moved folder are bound to its path: open the
	// rest under the new folder, seal it again under the old one.
	newPlain, err := ns.memPath(p)
	if err != nil {
		return p
	}
	newDir, _ := CleanPath(r.NewPath)
	oldDir, _ := CleanPath(r.Path)
	old, err := ns.treePath(oldDir + strings.TrimPrefix(newPlain, newDir))
	if err != nil {
		return p
	}
	return old
}

// record is the Record of commit c: its message and author as they are in
// the plain format, or opened with the key of c's tree in the sealed one. A
// sealed message that does not open is believed in nothing: the record has
// no trailers, and its subject says so. The error is the key's (ErrDecrypt
// and the like), never the message's.
//
// A message in the clear in a sealed tree is not believed either: memvault
// seals every message there, so someone else wrote it. Whether a tree is
// sealed is asked only once this vault has opened a vault key, so a log of
// the plain format looks up nothing more per commit.
func (v *Vault) record(c *gitlog.Commit) (Record, error) {
	if !seal.IsSealed(c.Message) && !v.seals.seen() {
		return record(c), nil
	}
	k, err := v.sealKeyAt(c.TreeHash)
	if err != nil {
		return Record{}, err
	}
	if !seal.IsSealed(c.Message) && k == nil {
		return record(c), nil
	}
	opened := *c
	// Nor is its author, which names the agent in a record.
	opened.Message, opened.Author.Name, opened.Author.Email = sealedUnopened, "", ""
	if k != nil && seal.IsSealed(c.Message) {
		if m, err := v.openMessage(k, c); err == nil {
			opened.Message, opened.Author.Name, opened.Author.Email = m.Text, m.AuthorName, m.AuthorEmail
		}
	}
	return record(&opened), nil
}

// sealedUnopened is the subject of a commit of a sealed tree whose message
// does not open under the key of its tree: written by someone without the
// key, or in the clear.
const sealedUnopened = "(a sealed message that does not open under this vault's key)"

// namesAt returns how memory paths are stored in the tree of commit h.
func (v *Vault) namesAt(h gitlog.Hash) (codec, error) {
	if h.IsZero() {
		return plainCodec{}, nil
	}
	root, err := v.repo.RootTree(h)
	if err != nil {
		return plainCodec{}, err
	}
	k, err := v.sealKeyAt(root)
	return v.codec(k), err
}

func record(c *gitlog.Commit) Record {
	r := Record{
		Commit:  c.Hash.String(),
		Parents: make([]string, len(c.ParentHashes)),
		Time:    c.Author.When,
		Author:  c.Author.Name,
		Signer:  keys.SignerFingerprint(c.Signed),
	}
	for i, p := range c.ParentHashes {
		r.Parents[i] = p.String()
	}
	var trailers []trailer
	r.Subject, trailers = parseMessage(c.Message)
	for _, t := range trailers {
		switch t.key {
		case trCommand:
			r.Command = t.value
		case trPath:
			r.Path = t.value
		case trNewPath:
			r.NewPath = t.value
		case trToolUseID:
			r.ToolUseID = t.value
		case trAgent:
			r.Agent = t.value
		case trSession:
			r.Session = t.value
		case trSource:
			r.Source = t.value
		case trOrigin:
			r.Origin = t.value
		case trApproved:
			r.Approved = t.value
		case trConflict:
			r.Conflicts = append(r.Conflicts, t.value)
		case trDeleted:
			r.Deleted = append(r.Deleted, t.value)
		}
	}
	return r
}
