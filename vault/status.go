package vault

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// Status is where a vault stands: its branch, each remote's distance from it,
// the memory files a merge left for a person to settle, and the identity.
type Status struct {
	Branch string `json:"branch"` // always "main"
	Head   Record `json:"head"`   // the commit the branch is at
	// Remotes are the vault's remotes, as of the last sync, pull or push with
	// each (status itself does not go to the network).
	Remotes []remoteStatus `json:"remotes"`
	// Conflicts are the current memory files that hold conflict markers, or
	// that a merge moved aside (x.conflict-ours, x.conflict-theirs), by path.
	// ConflictsUnknown is set when the files could not be read to tell.
	Conflicts        []conflictFile `json:"conflicts"`
	ConflictsUnknown string         `json:"conflicts_unknown,omitempty"`
	// BadEntries are the entries of the current tree that are no memory
	// file memvault reads (see ErrBadEntry), by path: a read of each fails
	// alone, and the rest of the vault, conflicts included, is read as usual.
	BadEntries []EntryError   `json:"bad_entries"`
	Identity   identityStatus `json:"identity"`
	// Pending counts the changes that wait on the review line for a person
	// (see Review).
	Pending int `json:"pending"`
}

// remoteStatus is one remote's distance from the branch.
type remoteStatus struct {
	Name string `json:"name"`
	URL  string `json:"url"` // any password replaced by xxxxx
	// Known is false until the remote's branch was first fetched or pushed.
	Known bool `json:"known"`
	// Ahead counts the commits the branch has that the remote lacks (a push
	// sends them), Behind those the remote has that the branch lacks (a pull
	// brings them in), as git status counts a branch against its upstream.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
}

// conflictFile is a memory file a merge left to settle, and how.
type conflictFile struct {
	Path string `json:"path"`
	// Kind is "markers" (both sides kept between conflict markers) or
	// "moved-aside" (a file set aside where the other side made a folder).
	Kind string `json:"kind"`
}

// identityStatus is the identity in use and what it reads.
type identityStatus struct {
	Path string   `json:"path"`
	Keys []string `json:"keys"` // its public keys
	// Others are the other identity files it reads with: keys a rotation
	// retired beside it, and further identities given.
	Others []string `json:"others"`
	// ReadsCurrent says whether one of its keys is among the current
	// recipients; ReadsHistory whether every set of recipients the history
	// held had one of its keys or the others' (Unreadable counts the commits
	// whose set had none).
	ReadsCurrent bool `json:"reads_current"`
	ReadsHistory bool `json:"reads_history"`
	Unreadable   int  `json:"unreadable_recipient_sets"`
	// Trouble says why the identity cannot be used, when it cannot.
	Trouble string `json:"trouble,omitempty"`
}

// Kinds of conflictFile.
const (
	conflictMarkers    = "markers"
	conflictMovedAside = "moved-aside"
)

var (
	oursMarker   = regexp.MustCompile(`^<<<<<<< `)
	theirsMarker = regexp.MustCompile(`^>>>>>>> `)
	movedAside   = regexp.MustCompile(`\.conflict-(ours|theirs)(-[0-9]+)?$`)
)

// Status says where the vault stands. It reads no network. A file the
// identity cannot read leaves the conflicts unknown (ConflictsUnknown says
// why) rather than failing; the error is for a vault that cannot be read.
func (v *Vault) Status(ctx context.Context) (*Status, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: status: %w", err)
	}
	c, err := v.repo.ReadCommit(head)
	if err != nil {
		return nil, fmt.Errorf("vault: status: %w", err)
	}
	rec, err := v.record(c)
	if unreadable(err) {
		// A sealed vault's messages open under its key, which an identity
		// that is not a recipient cannot open; status still says where the
		// vault stands, and that this identity does not read it.
		hidden := *c
		hidden.Message, hidden.Author.Name, hidden.Author.Email = sealedKeyUnread, "", ""
		rec, err = record(&hidden), nil
	}
	if err != nil {
		return nil, fmt.Errorf("vault: status: %w", err)
	}
	st := &Status{Branch: "main", Head: rec, Remotes: []remoteStatus{}, Conflicts: []conflictFile{}, BadEntries: []EntryError{}}
	remotes, err := v.repo.Remotes()
	if err != nil {
		return nil, fmt.Errorf("vault: status: %w", err)
	}
	for _, r := range remotes {
		rs := remoteStatus{Name: r.Name, URL: gitlog.Redact(r.URL)}
		there, err := v.repo.Ref(gitlog.RemoteRef(r.Name))
		if err == nil && !there.IsZero() {
			rs.Known = true
			if rs.Ahead, rs.Behind, err = v.aheadBehind(ctx, head, there); err != nil {
				return nil, err
			}
		}
		st.Remotes = append(st.Remotes, rs)
	}
	if err := v.findConflicts(ctx, st); err != nil {
		return nil, err
	}
	st.Identity = v.identityStatus(ctx, head)
	line, err := v.readLine()
	if err != nil {
		return nil, err
	}
	st.Pending = len(line.pending)
	return st, nil
}

// What status says of what the identity in use cannot read.
const (
	conflictsUnread = "the files cannot all be read with this identity"
	sealedKeyUnread = "(a sealed message: this identity cannot open the vault's key)"
)

// unreadable reports whether err says the identity in use cannot read
// something: none, a wrong one, or one whose passphrase was not given.
func unreadable(err error) bool {
	return errors.Is(err, ErrNoIdentity) || errors.Is(err, ErrDecrypt) || errors.Is(err, ErrPassphrase)
}

// findConflicts fills in st.Conflicts from the current files.
func (v *Vault) findConflicts(ctx context.Context, st *Status) error {
	head, err := v.repo.Head()
	if err != nil {
		return fmt.Errorf("vault: status: %w", err)
	}
	root, err := v.repo.RootTree(head)
	if err != nil {
		return fmt.Errorf("vault: status: %w", err)
	}
	ns, err := v.namesOfRoot(root)
	if unreadable(err) {
		st.ConflictsUnknown = conflictsUnread
		return nil
	}
	if err != nil {
		return fmt.Errorf("vault: status: %w", err)
	}
	files, bad, err := v.readableMemory(root, ns)
	if err != nil {
		return err
	}
	st.BadEntries = append(st.BadEntries, bad...)
	if slices.Contains(bad, memoryNotAFolder) {
		return nil // nothing under it to read
	}
	for _, f := range files {
		if movedAside.MatchString(f.path) {
			st.Conflicts = append(st.Conflicts, conflictFile{Path: memPath(f.path), Kind: conflictMovedAside})
		}
	}
	var marked []string
	res, err := v.Grep(ctx, oursMarker, GrepOptions{Rev: head.String()})
	switch {
	case err == nil:
		for _, f := range res.Files {
			marked = append(marked, f.Path)
		}
		// Grep names again the entries the listing left out, and adds the
		// blobs that do not read.
		for _, be := range res.BadEntries {
			if !slices.Contains(st.BadEntries, be) {
				st.BadEntries = append(st.BadEntries, be)
			}
		}
	case unreadable(err) || errors.Is(err, ErrBadEntry):
		// Grep stops at the first file it cannot read; the files are then
		// searched one by one: each blob that is no memory file is named,
		// and one this identity cannot read leaves the conflicts unknown
		// without leaving the files after it unread.
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := memPath(f.path)
			plain, err := v.readShared(p, f.hash)
			var ee *EntryError
			switch {
			case errors.As(err, &ee):
				st.BadEntries = append(st.BadEntries, *ee)
				continue
			case unreadable(err):
				st.ConflictsUnknown = conflictsUnread
				continue
			case err != nil:
				return err
			}
			if hasMarkers(plain) {
				st.Conflicts = append(st.Conflicts, conflictFile{Path: p, Kind: conflictMarkers})
			}
		}
	default:
		return err
	}
	for _, p := range marked {
		plain, err := v.readFileAt(ctx, root, ns, p)
		if err != nil {
			return err
		}
		if hasMarkers(plain) {
			st.Conflicts = append(st.Conflicts, conflictFile{Path: p, Kind: conflictMarkers})
		}
	}
	sortConflicts(st.Conflicts)
	slices.SortFunc(st.BadEntries, func(a, b EntryError) int { return strings.Compare(a.Path, b.Path) })
	return nil
}

// readableFiles lists the memory files of the tree h of memory folder dir,
// whose names are ns, as openedFilesUnder does, but leaves out each entry a
// read refuses by its name or mode alone (a name that does not open in a
// sealed tree, a name no memory path has, a symbolic link, a folder that is
// no tree) and hands it to report instead, by path and reason: one bad entry
// fails alone. The path is the name as stored, never escaped, so that whoever
// prints it escapes it once (an error's path is quoted, see entryPath).
func (v *Vault) readableFiles(ns codec, dir string, h gitlog.Hash, report func(p, reason string)) ([]fileRef, error) {
	return v.walkFiles(ns, dir, h, true, func(dir, name string, err error) error {
		var ee *EntryError
		switch {
		case errors.As(err, &ee):
			report(dir+"/"+name, ee.Reason)
		case errors.Is(err, gitlog.ErrWrongType):
			report(dir+"/"+name, "its tree entry names an object of another type")
		default:
			return err
		}
		return nil
	})
}

func (v *Vault) readFileAt(ctx context.Context, root gitlog.Hash, ns codec, p string) ([]byte, error) {
	s := &Snapshot{v: v, root: root, names: ns}
	return s.ReadFile(ctx, p)
}

// hasMarkers tells whether text holds a whole conflict: an "ours" marker,
// the separator and a "theirs" marker, in that order.
func hasMarkers(text []byte) bool {
	state := 0
	for line := range strings.SplitSeq(string(text), "\n") {
		switch {
		case state == 0 && oursMarker.MatchString(line):
			state = 1
		case state == 1 && strings.TrimRight(line, "\r") == "=======":
			state = 2
		case state == 2 && theirsMarker.MatchString(line):
			return true
		}
	}
	return false
}

func sortConflicts(cs []conflictFile) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Path < cs[j-1].Path; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// aheadBehind counts the commits reachable from a and not b (onlyA) and from
// b and not a (onlyB), as git rev-list --count b..a and a..b do. It reads
// only the history's shape (gitlog's Parents) and never trusts commit dates:
// commits made within one second share a date, and a walk newest first by
// date that stopped once both sides met miscounted them. The usual cases, one
// side a line of commits on top of the other, cost that line; otherwise it
// walks both histories whole.
func (v *Vault) aheadBehind(ctx context.Context, a, b gitlog.Hash) (onlyA, onlyB int, err error) {
	if a == b {
		return 0, 0, nil
	}
	if n, ok, err := v.lineTo(ctx, a, b); err != nil || ok {
		return n, 0, err
	}
	if n, ok, err := v.lineTo(ctx, b, a); err != nil || ok {
		return 0, n, err
	}
	fromA, err := v.ancestors(ctx, a)
	if err != nil {
		return 0, 0, err
	}
	fromB, err := v.ancestors(ctx, b)
	if err != nil {
		return 0, 0, err
	}
	for h := range fromA {
		if !fromB[h] {
			onlyA++
		}
	}
	for h := range fromB {
		if !fromA[h] {
			onlyB++
		}
	}
	return onlyA, onlyB, nil
}

// lineTo follows from down its parents while each commit has exactly one,
// and says how many commits it passed when it reaches to: then those are all
// the commits from has and to lacks, since none of them can be below to.
// ok is false when it meets a merge or the first commit first.
func (v *Vault) lineTo(ctx context.Context, from, to gitlog.Hash) (n int, ok bool, err error) {
	for h := from; h != to; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, false, err
			}
		}
		ps, err := v.repo.Parents(h)
		if err != nil {
			return 0, false, fmt.Errorf("vault: status: %w", err)
		}
		if len(ps) != 1 {
			return 0, false, nil
		}
		h = ps[0]
	}
	return n, true, nil
}

// ancestors is the set of commits reachable from h, h included.
func (v *Vault) ancestors(ctx context.Context, h gitlog.Hash) (map[gitlog.Hash]bool, error) {
	seen := map[gitlog.Hash]bool{h: true}
	for todo := []gitlog.Hash{h}; len(todo) > 0; {
		if len(seen)%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		c := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		ps, err := v.repo.Parents(c)
		if err != nil {
			return nil, fmt.Errorf("vault: status: %w", err)
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				todo = append(todo, p)
			}
		}
	}
	return seen, nil
}

// identityStatus says what the identity reads.
func (v *Vault) identityStatus(ctx context.Context, head gitlog.Hash) identityStatus {
	is := identityStatus{Path: v.opts.IdentityFile, Keys: []string{}, Others: []string{}}
	id, err := v.keys.identity()
	if err != nil {
		is.Trouble = err.Error()
		return is
	}
	ours := map[string]bool{}
	for _, r := range id.Recipients {
		is.Keys = append(is.Keys, r.Key)
		ours[r.Key] = true
	}
	v.keys.otherIDs()
	v.keys.omu.Lock()
	for _, o := range v.keys.others {
		is.Others = append(is.Others, o.Path)
		for _, r := range o.Recipients {
			ours[r.Key] = true
		}
	}
	v.keys.omu.Unlock()
	holds := func(f *keys.RecipientsFile, keys map[string]bool) bool {
		for _, e := range f.Entries {
			if keys[e.Key] {
				return true
			}
		}
		return false
	}
	mine := map[string]bool{}
	for _, k := range is.Keys {
		mine[k] = true
	}
	if root, err := v.repo.RootTree(head); err == nil {
		if f, err := v.keys.recipientsFileIn(root); err == nil {
			is.ReadsCurrent = holds(f, mine)
		}
	}
	_ = v.repo.Walk(ctx, head, gitlog.WalkOptions{Path: recipientsPath}, func(c *gitlog.Commit, p string) (string, error) {
		if f, err := v.keys.recipientsFileIn(c.TreeHash); err == nil && !holds(f, ours) {
			is.Unreadable++
		}
		return p, nil
	})
	is.ReadsHistory = is.Unreadable == 0
	return is
}
