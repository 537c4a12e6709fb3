package vault

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
)

// ConflictError is the error of a revert that does not apply cleanly. It wraps
// ErrConflict.
type ConflictError struct {
	// Op is what was asked of Commit: "" for a revert, "approve" or
	// "reject" for a change of the review line.
	Op     string
	Commit string   // the commit to revert, approve or reject
	Paths  []string // the memory files where later changes touch the same lines
	// Where says, for each of Paths, what is in the way: the lines of the
	// file as it is now ("line 3", "lines 3-5"), or "deleted since",
	// "re-created since", "a folder or a file above it is in the way".
	Where []string
}

// Error names the commit, the files and the lines; it quotes no content.
func (e *ConflictError) Error() string {
	var msg string
	switch e.Op {
	case "approve":
		msg = fmt.Sprintf("vault: approve %.12s: %s changed on main since in the same or adjacent lines, so the change does not apply there: approve the pending changes it builds on first, or reject it",
			e.Commit, strings.Join(e.Paths, ", "))
	case "reject":
		msg = fmt.Sprintf("vault: reject %.12s: later pending changes touch the same lines of %s: reject them too, or approve them first",
			e.Commit, strings.Join(e.Paths, ", "))
	default:
		msg = fmt.Sprintf("vault: revert %.12s: %s changed since in the same or adjacent lines, so the change cannot be undone by merging",
			e.Commit, strings.Join(e.Paths, ", "))
	}
	var where []string
	for i, w := range e.Where {
		if w != "" && i < len(e.Paths) {
			where = append(where, e.Paths[i]+": "+w)
		}
	}
	if len(where) > 0 {
		msg += " (" + strings.Join(where, "; ") + ")"
	}
	return msg
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// UndoResult says what Restore, Revert or Rollback did.
type UndoResult struct {
	Commit string       `json:"commit"` // the new commit, or "" when nothing needed to change
	Source string       `json:"source"` // the full hash of the commit the content came from
	Files  []FileChange `json:"files"`  // the files the new commit changed, without diffs
}

// Restore makes the memory file or directory at path what it was at revision
// rev (see Resolve), as one new commit whose trailers say restore and name the
// source commit; a directory gets exactly its files of then. meta describes who
// asked (its Command and Source are set here). Nothing changes, and no commit is
// made, when path is already as it was. The error wraps ErrUnknownRevision for a
// bad rev, ErrNotExist when nothing was at path then, ErrNotDir when a parent of
// path is a file now, ErrNoIdentity or ErrDecrypt when content must be
// re-encrypted (the recipients changed since rev) and cannot be read, and is a
// *LimitError when the restored files would take the vault over its limits (as
// a write would: see Tx.WriteFile).
func (v *Vault) Restore(ctx context.Context, meta Meta, path, rev string) (*UndoResult, error) {
	cp, err := CleanPath(path)
	if err != nil {
		return nil, err
	}
	src, err := v.resolve(rev)
	if err != nil {
		return nil, err
	}
	return v.undo(ctx, meta, "restore", cp, src, src, func(u *undoer) error {
		nothing := fmt.Errorf("vault: restore %s: nothing was there at %s: %w", cp, shortHash(u.src), ErrNotExist)
		if !sameKey(u.names.key(), u.srcNames.key()) {
			return u.reconcileOpened(cp, nothing)
		}
		tp, err := u.names.treePath(cp)
		if unsealable(err) {
			return nothing // a sealed tree cannot hold it
		} else if err != nil {
			return err
		}
		want, err := u.v.repo.Lookup(u.srcRoot, tp)
		switch {
		case tp == memDir && errors.Is(err, gitlog.ErrNotFound):
			return u.reconcile(tp, u.at(tp), nil) // an empty vault then
		case errors.Is(err, gitlog.ErrNotFound) || errors.Is(err, gitlog.ErrNotDir):
			return nothing
		case err != nil:
			return fmt.Errorf("vault: restore %s: %w", cp, err)
		}
		if parent := u.fileAbove(tp); parent != "" {
			return fmt.Errorf("vault: restore %s: %s is a file now (restore it, or its directory, instead): %w", cp, u.memPath(parent), ErrNotDir)
		}
		return u.reconcile(tp, u.at(tp), &want)
	})
}

// Rollback makes all of /memories what it was at revision rev, as one new commit
// whose trailers say rollback and name the source commit. The vault's own files
// (.memvault/, such as its recipients) are not rolled back. Otherwise it is
// Restore of /memories, with its errors.
func (v *Vault) Rollback(ctx context.Context, meta Meta, rev string) (*UndoResult, error) {
	src, err := v.resolve(rev)
	if err != nil {
		return nil, err
	}
	return v.undo(ctx, meta, "rollback", Root, src, src, func(u *undoer) error {
		if !sameKey(u.names.key(), u.srcNames.key()) {
			return u.reconcileOpened(Root, nil)
		}
		want, err := u.v.repo.Lookup(u.srcRoot, memDir)
		if errors.Is(err, gitlog.ErrNotFound) {
			return u.reconcile(memDir, u.at(memDir), nil)
		}
		if err != nil {
			return fmt.Errorf("vault: rollback: %w", err)
		}
		return u.reconcile(memDir, u.at(memDir), &want)
	})
}

// undoer stages the changes of one undo on top of the current state.
type undoer struct {
	v        *Vault
	src      gitlog.Hash // the commit the undo names as its source
	srcRoot  gitlog.Hash // the tree the content comes from
	headRoot gitlog.Hash
	// reuse: the recipients, and the key that seals names and sizes, are
	// what they were at srcRoot: ciphertext can be linked as is.
	reuse    bool
	rs       []age.Recipient
	names    codec // how paths are stored now, and what new blobs are sealed with
	srcNames codec // how paths are stored in srcRoot
	changes  []gitlog.Change
}

// undo runs plan under the writer lock against the current state, with content
// from commit content, and commits what it staged as one commit described by
// meta, command, path and source.
func (v *Vault) undo(ctx context.Context, meta Meta, command, path string, src, content gitlog.Hash, plan func(u *undoer) error) (*UndoResult, error) {
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	head, err := v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	u := &undoer{v: v, src: src, headRoot: head.root, names: head.names}
	if u.srcRoot, err = v.repo.RootTree(content); err != nil {
		return nil, fmt.Errorf("vault: %s: %w", command, err)
	}
	if u.srcNames, err = v.namesOfRoot(u.srcRoot); err != nil {
		return nil, err
	}
	if err := u.recipients(head); err != nil {
		return nil, err
	}
	u.reuse = u.reuse && sameKey(u.names.key(), u.srcNames.key())
	if err := plan(u); err != nil {
		return nil, err
	}
	res := &UndoResult{Source: src.String()}
	if len(u.changes) == 0 {
		return res, nil
	}
	// An undo obeys the limits a write does: restoring what was deleted
	// must not take the vault past them either.
	{
		g, err := v.changesGrowth(ctx, head.root, u.changes)
		if err == nil {
			err = v.checkGrowth(ctx, head, g)
		}
		if err != nil {
			return nil, err
		}
	}
	meta.Command, meta.Source = command, src.String()
	if err := v.commit(w, head.commit, path, "", u.changes, meta); err != nil {
		return nil, err
	}
	h, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", command, err)
	}
	res.Commit = h.String()
	newRoot, err := v.repo.RootTree(h)
	if err == nil {
		res.Files, err = v.fileChanges(ctx, head.root, newRoot, "", false)
	}
	return res, err
}

// recipients learns whether the recipients file is what it was at the source,
// and the current recipients, which new ciphertext is encrypted to.
func (u *undoer) recipients(head *Snapshot) error {
	now, err := u.v.repo.Lookup(u.headRoot, recipientsPath)
	if err != nil {
		return fmt.Errorf("vault: %s: %w", recipientsPath, err)
	}
	then, err := u.v.repo.Lookup(u.srcRoot, recipientsPath)
	u.reuse = err == nil && then.Hash == now.Hash
	content, err := head.recipientsContent()
	if err != nil {
		return err
	}
	u.rs, err = u.v.keys.parseRecipients(content)
	return err
}

// at returns the current entry at tree path tp, or nil.
func (u *undoer) at(tp string) *gitlog.Entry {
	e, err := u.v.repo.Lookup(u.headRoot, tp)
	if err != nil {
		return nil
	}
	return &e
}

// fileAbove returns the tree path of a file that is a parent of tp now, or "".
func (u *undoer) fileAbove(tp string) string {
	for i := strings.IndexByte(tp, '/'); i > 0; i = nextSlash(tp, i) {
		if e, err := u.v.repo.Lookup(u.headRoot, tp[:i]); err == nil && !e.IsDir() {
			return tp[:i]
		}
	}
	return ""
}

func nextSlash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// reconcile stages what makes tree path tp hold want (nil: nothing) where it
// holds have now. With the same recipients it links want's objects as they are;
// otherwise it re-encrypts want's files whose plaintext differs from what is there.
func (u *undoer) reconcile(tp string, have, want *gitlog.Entry) error {
	switch {
	case want == nil && have == nil:
		return nil
	case want == nil:
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Delete, Path: tp})
		return nil
	case have != nil && have.Hash == want.Hash:
		return nil
	case u.reuse:
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Link, Path: tp, Hash: want.Hash})
		return nil
	case have != nil && have.IsDir() != want.IsDir():
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Delete, Path: tp})
		have = nil
	}
	if !want.IsDir() {
		return u.putFile(tp, have, want.Hash)
	}
	var haveTree gitlog.Hash
	if have != nil {
		haveTree = have.Hash
	}
	wants, err := u.v.repo.ReadTree(want.Hash)
	if err != nil {
		return err
	}
	haves, err := u.v.repo.ReadTree(haveTree)
	if err != nil {
		return err
	}
	byName := map[string]gitlog.Entry{}
	for _, e := range haves {
		byName[e.Name] = e
	}
	for _, w := range wants {
		var h *gitlog.Entry
		if e, ok := byName[w.Name]; ok {
			h = &e
			delete(byName, w.Name)
		}
		if err := u.reconcile(tp+"/"+w.Name, h, &w); err != nil {
			return err
		}
	}
	gone := make([]string, 0, len(byName))
	for name := range byName {
		gone = append(gone, name)
	}
	sort.Strings(gone)
	for _, name := range gone {
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Delete, Path: tp + "/" + name})
	}
	return nil
}

// putFile stages blob's plaintext, re-encrypted to the current recipients, at
// tp, unless the file there (have, if any) holds that plaintext already.
func (u *undoer) putFile(tp string, have *gitlog.Entry, blob gitlog.Hash) error {
	plain, err := u.v.readBlob(u.memPath(tp), blob)
	if err != nil {
		return err
	}
	if have != nil {
		cur, err := u.v.readBlob(u.memPath(tp), have.Hash)
		if err != nil {
			return err
		}
		if string(cur) == string(plain) {
			return nil
		}
	}
	return u.put(tp, plain)
}

func (u *undoer) put(tp string, plain []byte) error {
	ct, err := u.names.blob(plain, u.rs)
	if err != nil {
		return err
	}
	u.changes = append(u.changes, gitlog.Change{Op: gitlog.Put, Path: tp, Data: ct})
	return nil
}

// memPath names the current tree's path tp for an error: opened when it
// opens.
func (u *undoer) memPath(tp string) string {
	if p, err := u.names.memPath(tp); err == nil {
		return p
	}
	return memPath(tp)
}

// reconcileOpened is reconcile of the memory path cp (a file or a folder)
// when the source tree stores names otherwise than the current one (another
// key, or the other format): each file is paired with the current one by its
// plaintext path, and its plaintext is sealed again under the current key
// unless the file there holds it already. notThere (nil: nothing) is the
// error when the source had nothing at cp.
func (u *undoer) reconcileOpened(cp string, notThere error) error {
	want, err := u.v.openedFilesAt(u.srcRoot, u.srcNames, cp)
	if err != nil {
		return err
	}
	if len(want) == 0 && notThere != nil {
		return notThere
	}
	have, err := u.v.openedFilesAt(u.headRoot, u.names, cp)
	if err != nil {
		return err
	}
	if tp, err := u.names.treePath(cp); err == nil && len(want) > 0 {
		if parent := u.fileAbove(tp); parent != "" {
			return fmt.Errorf("vault: restore %s: %s is a file now (restore it, or its directory, instead): %w", cp, u.memPath(parent), ErrNotDir)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[p]; ok {
			continue
		}
		tp, err := u.names.treePath(p)
		if err != nil {
			return err
		}
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Delete, Path: tp})
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		tp, err := u.names.treePath(p)
		if err != nil {
			return err
		}
		plain, err := u.v.readBlob(p, want[p])
		if err != nil {
			return err
		}
		if h, ok := have[p]; ok {
			cur, err := u.v.readBlob(p, h)
			if err != nil {
				return err
			}
			if string(cur) == string(plain) {
				continue
			}
		}
		if err := u.put(tp, plain); err != nil {
			return err
		}
	}
	return nil
}

// texts reads the plaintexts of memory file p at the blobs base, ours and
// theirs of a three-way comparison (nil for a zero hash: no file there).
func (u *undoer) texts(p string, base, ours, theirs gitlog.Hash) (b, o, t []byte, err error) {
	out := [3][]byte{}
	for i, h := range [3]gitlog.Hash{base, ours, theirs} {
		if h.IsZero() {
			continue
		}
		if out[i], err = u.v.readBlob(p, h); err != nil {
			return nil, nil, nil, err
		}
	}
	return out[0], out[1], out[2], nil
}

// setFile stages tree path tp to hold blob h's file (none for ZeroHash): the
// blob itself when it can be reused, else its plaintext encrypted anew.
func (u *undoer) setFile(tp string, h gitlog.Hash) error {
	switch {
	case h.IsZero():
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Delete, Path: tp})
		return nil
	case u.reuse:
		u.changes = append(u.changes, gitlog.Change{Op: gitlog.Link, Path: tp, Hash: h})
		return nil
	}
	plain, err := u.v.readBlob(u.memPath(tp), h)
	if err != nil {
		return err
	}
	return u.put(tp, plain)
}
