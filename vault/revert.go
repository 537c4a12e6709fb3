package vault

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// Revert undoes the changes the commit rev names (see Resolve) made to the memory
// files, against its first parent, on top of the current state, as one new commit
// whose trailers say revert and name that commit. As git revert does, each file
// the commit changed is merged by lines: the commit's version is the base, the
// current one is ours, the one before the commit is theirs; later edits elsewhere
// in the file are kept; a file moved since by rename commands is reverted where it
// is now. meta describes who asked (its Command and Source are set here). Nothing changes, and no commit is made, when the changes are undone
// already. The vault's own files (.memvault/) are never reverted.
//
// When a later change touches the same or adjacent lines, or deleted or
// re-created a file the commit changed, nothing is committed and the error is a
// *ConflictError, wrapping ErrConflict, that names the files. Other errors wrap
// ErrUnknownRevision for a bad rev, and ErrNoIdentity or ErrDecrypt when files
// cannot be decrypted, and ErrInvalid for the commit that converted the vault
// to the sealed format (see Seal), which changed no memory and is not undone.
func (v *Vault) Revert(ctx context.Context, meta Meta, rev string) (*UndoResult, error) {
	h, err := v.resolve(rev)
	if err != nil {
		return nil, err
	}
	c, err := v.repo.ReadCommit(h)
	if err != nil {
		return nil, fmt.Errorf("vault: revert: %w", err)
	}
	var before gitlog.Hash // the first parent's tree
	if len(c.ParentHashes) > 0 {
		if before, err = v.repo.RootTree(c.ParentHashes[0]); err != nil {
			return nil, fmt.Errorf("vault: revert: %w", err)
		}
	}
	if err := v.refuseRevertOfSeal(h, before, c.TreeHash); err != nil {
		return nil, err
	}
	// The commit's changes by plaintext path, in either format.
	files, err := v.diffOpened(before, c.TreeHash, "")
	if err != nil {
		return nil, fmt.Errorf("vault: revert: %w", err)
	}
	rec, err := v.record(c)
	if err != nil {
		return nil, fmt.Errorf("vault: revert: %w", err)
	}
	path := rec.Path
	if path == "" && len(files) > 0 {
		path = memPath(files[0].Path)
	}
	// The content to take back comes from the parent: link it as is when the
	// recipients (and the key) then are the current ones.
	from := h
	if len(c.ParentHashes) > 0 {
		from = c.ParentHashes[0]
	}
	moves, err := v.renamesAfter(ctx, h)
	if err != nil {
		return nil, err
	}
	if cp, err := CleanPath(path); err == nil && path != "" {
		path = moves.follow(cp) // where the file is now
	}
	// A file the commit renamed goes back as a move of what is there now, so
	// edits made to it since are kept.
	renamedTo, isTarget := pairRenames(files)
	return v.undo(ctx, meta, "revert", path, h, from, func(u *undoer) error {
		ce := &ConflictError{Commit: h.String()}
		for i, f := range files {
			if isTarget[i] {
				continue // undone with the deletion it pairs with
			}
			var where, shown string
			if j, ok := renamedTo[i]; ok {
				to := moves.follow(memPath(files[j].Path))
				old, err := u.names.treePath(memPath(f.Path))
				if err != nil {
					return err
				}
				now, err := u.names.treePath(to)
				if err != nil {
					return err
				}
				if where, err = u.revertMove(old, now); err != nil {
					return err
				}
				shown = to // the conflict is where the file is now
			} else {
				shown = moves.follow(memPath(f.Path))
				if f.Path, err = u.names.treePath(shown); err != nil {
					return err
				}
				if where, err = u.revertFile(f); err != nil {
					return err
				}
			}
			if where != "" {
				ce.Paths = append(ce.Paths, shown)
				ce.Where = append(ce.Where, where)
			}
		}
		if len(ce.Paths) > 0 {
			return ce
		}
		return nil
	})
}

// revertMove stages the undoing of a rename of one file from tree path old to
// tree path now (where it is today): what the file holds now goes back to old.
// It returns what is in the way ("" when nothing is).
func (u *undoer) revertMove(old, now string) (where string, err error) {
	blob, blocked := u.fileAt(now)
	switch {
	case blocked:
		return inTheWay, nil
	case blob.IsZero():
		return "deleted since", nil
	}
	there, blocked := u.fileAt(old)
	switch {
	case blocked:
		return inTheWay, nil
	case !there.IsZero():
		return "re-created since at " + u.memPath(old), nil
	}
	// The blob is in the current tree, so it is encrypted to the current
	// recipients already: it moves as it is.
	u.changes = append(u.changes,
		gitlog.Change{Op: gitlog.Delete, Path: now},
		gitlog.Change{Op: gitlog.Link, Path: old, Hash: blob})
	return "", nil
}

// inTheWay says that a folder, or a file above the path, blocks a revert.
const inTheWay = "a folder or a file above it is in the way"

// revertFile stages the undoing of one file's change f (From before the commit,
// To after it) on top of what the file holds now. It returns what is in the
// way ("" when nothing is): the lines of the file now that a later change
// touched, or how the file changed since.
func (u *undoer) revertFile(f gitlog.TreeChange) (where string, err error) {
	p := u.memPath(f.Path)
	now, blocked := u.fileAt(f.Path)
	if blocked {
		return inTheWay, nil
	}
	switch {
	case now == f.From:
		return "", nil // undone already
	case now == f.To && u.reuse:
		return "", u.takeBack(f)
	}
	// The file changed since, or was re-encrypted, or its content must be
	// encrypted anew (when it is the commit's still, and the commit changed
	// no plaintext, there is nothing to take back): compare plaintexts.
	base, ours, theirs, err := u.texts(p, f.To, now, f.From)
	if err != nil {
		return "", err
	}
	switch {
	case !now.IsZero() && !f.From.IsZero() && bytes.Equal(ours, theirs):
		return "", nil // as it was before: a commit that changed no plaintext (a re-encryption) has nothing to undo
	case !now.IsZero() && !f.To.IsZero() && bytes.Equal(ours, base):
		return "", u.takeBack(f)
	case now.IsZero():
		return "deleted since", nil // deleted on one side, changed on the other
	case f.To.IsZero():
		return "re-created since", nil
	case f.From.IsZero():
		return "changed since it was created", nil
	}
	merged, n := textdiff.Merge(base, ours, theirs, textdiff.Labels{Ours: "current", Base: "reverted", Theirs: "before"})
	if n > 0 {
		return conflictLines(merged), nil
	}
	if bytes.Equal(merged, ours) {
		return "", nil
	}
	return "", u.put(f.Path, merged)
}

// conflictLines names the lines of the current file ("ours") inside the
// conflict regions of a merge: "line 3", "lines 3-5, 9". A region where the
// current file has no line of its own is named by the line it follows.
func conflictLines(merged []byte) string {
	var parts []string
	line, part, start := 0, 0, 0 // part: 0 outside, 1 ours, 2 theirs
	for l := range strings.SplitSeq(string(merged), "\n") {
		switch {
		case part == 0 && strings.HasPrefix(l, "<<<<<<<"):
			part, start = 1, line+1
		case part == 1 && l == "=======":
			part = 2
		case part == 2 && strings.HasPrefix(l, ">>>>>>>"):
			part = 0
			switch end := line; {
			case end < start:
				parts = append(parts, fmt.Sprintf("after line %d", line))
			case end == start:
				parts = append(parts, fmt.Sprintf("%d", start))
			default:
				parts = append(parts, fmt.Sprintf("%d-%d", start, end))
			}
		case part == 0, part == 1:
			line++
		}
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], "after") {
		return parts[0] + " now"
	}
	if len(parts) == 1 && !strings.Contains(parts[0], "-") {
		return "line " + parts[0] + " now"
	}
	return "lines " + strings.Join(parts, ", ") + " now"
}

// takeBack stages the file's content from before the commit.
func (u *undoer) takeBack(f gitlog.TreeChange) error { return u.setFile(f.Path, f.From) }

// fileAt returns the blob at tree path tp now (ZeroHash for none); blocked is
// true when a directory is there, or a file above it, so no file can go there.
func (u *undoer) fileAt(tp string) (blob gitlog.Hash, blocked bool) {
	e, err := u.v.repo.Lookup(u.headRoot, tp)
	switch {
	case err == nil && e.IsDir():
		return gitlog.ZeroHash, true
	case err == nil:
		return e.Hash, false
	}
	return gitlog.ZeroHash, u.fileAbove(tp) != ""
}

// renames are the moves made by rename commands, oldest first, as memory
// paths (in the sealed format a folder's move stores every name below it
// anew, so only plaintext paths follow a file through it).
type renames [][2]string

// follow returns where the file at memory path p went through the moves.
func (rs renames) follow(p string) string {
	for _, r := range rs {
		if rest, ok := strings.CutPrefix(p, r[0]); ok && (rest == "" || rest[0] == '/') {
			p = r[1] + rest
		}
	}
	return p
}

// renamesAfter collects the rename commands of the commits made after commit h,
// up to main.
func (v *Vault) renamesAfter(ctx context.Context, h gitlog.Hash) (renames, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, err
	}
	var rs renames
	err = eachCommit(ctx, v.repo, head, func(c *gitlog.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.Hash == h {
			return gitlog.ErrStop
		}
		r, err := v.record(c)
		if err != nil {
			return err
		}
		if r.Command != "rename" {
			return nil
		}
		from, err1 := CleanPath(r.Path)
		to, err2 := CleanPath(r.NewPath)
		if err1 == nil && err2 == nil && from != Root && to != Root {
			rs = append(rs, [2]string{from, to})
		}
		return nil
	})
	slices.Reverse(rs)
	return rs, err
}
