package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/memvault/memvault/gitlog"
)

const dirMode = modeDir

// Tx is a change being made inside Update. Its reads see the state before the
// change, not what it has staged; a memory command stages one mutation.
type Tx struct {
	*Snapshot
	changes []gitlog.Change
	path    string
	newPath string
	grow    growth        // what the staged changes add to the vault, when it has limits
	written []writtenBlob // plaintext of the blobs staged, for the cache once committed
	folded  int           // changes staged as parts of the one before them (a sealed folder's move)
	// removed are the files and folders the Tx deleted, and emptied the
	// files it wrote empty (or blank) over content: what the guard against
	// mass deletion counts (see review.go).
	removed []gitlog.Entry
	emptied int
}

// writtenBlob is a blob a Tx staged and its plaintext.
type writtenBlob struct {
	hash  gitlog.Hash
	plain []byte
}

// Update takes the vault's writer lock (waiting for other goroutines and
// processes), runs fn on the latest state, and commits what fn staged as one
// commit described by meta, durable before Update returns. If fn returns an error
// nothing is committed and Update returns that error unchanged. Nothing staged
// means no commit.
func (v *Vault) Update(ctx context.Context, meta Meta, fn func(tx *Tx) error) error {
	_, err := v.updateWith(ctx, meta, fn, nil)
	return err
}

// UpdateCommit is Update that returns the commit it made (as Record.Commit
// names it), "" when fn staged nothing: a caller that shows or undoes its
// own write learns the commit from the write, however many others commit
// after it.
func (v *Vault) UpdateCommit(ctx context.Context, meta Meta, fn func(tx *Tx) error) (string, error) {
	h, err := v.updateWith(ctx, meta, fn, nil)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// messageFunc lets a command that changes many files write its own subject
// and add trailers, once its change is known.
type messageFunc func(subject *string, trailers *[]trailer)

// updateWith is Update, with msg (when not nil) shaping the commit message;
// it returns the commit it made, zero when fn staged nothing.
func (v *Vault) updateWith(ctx context.Context, meta Meta, fn func(tx *Tx) error, msg messageFunc) (gitlog.Hash, error) {
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return gitlog.Hash{}, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return gitlog.Hash{}, err
	}
	tx, err := runTx(snap, fn)
	if err != nil || tx == nil {
		return gitlog.Hash{}, err
	}
	return v.commitTx(w, onMain, tx, meta, msg)
}

// runTx runs fn on a Tx over snap; it returns nil when fn staged nothing.
func runTx(snap *Snapshot, fn func(tx *Tx) error) (*Tx, error) {
	tx := &Tx{Snapshot: snap}
	if err := fn(tx); err != nil {
		return nil, err
	}
	if len(tx.changes) == 0 {
		return nil, nil
	}
	return tx, nil
}

// commitTx commits what tx staged on top of its snapshot, moving to's ref.
func (v *Vault) commitTx(w *gitlog.Writer, to target, tx *Tx, meta Meta, msg messageFunc) (gitlog.Hash, error) {
	h, err := v.commitStagedTo(w, to, tx.commit, tx.path, tx.newPath, tx.changes, len(tx.changes)-tx.folded, meta, msg)
	if err != nil {
		return h, err
	}
	// What was just encrypted is not decrypted again: the next read of these
	// blobs (a str_replace after a create, a view after either) finds them here.
	for _, b := range tx.written {
		v.cache.put(b.hash, b.plain)
	}
	return h, nil
}

// WriteFile stages p's content as plain, encrypted to the vault's recipients,
// creating parent directories. The error wraps ErrIsDir if p is a directory,
// ErrNotDir if an ancestor is a file, and is a *LimitError if plain is over the
// file size limit (wrapping ErrTooLarge) or the write would take the vault over
// its limit on files (ErrTooManyFiles) or on total size (ErrVaultFull), counting
// what the Tx staged before; the limits are checked in that order.
func (tx *Tx) WriteFile(ctx context.Context, p string, plain []byte) error {
	tp, err := tx.names.treePath(p)
	if err != nil {
		return err
	}
	limits := tx.v.limits
	if n := int64(len(plain)); n > limits.MaxFileSize {
		cp, _ := CleanPath(p)
		return &LimitError{Path: cp, Would: n, Limit: limits.MaxFileSize, Err: ErrTooLarge}
	}
	e, err := tx.v.repo.Lookup(tx.root, tp)
	switch {
	case tp == memDir || err == nil && e.IsDir():
		return fmt.Errorf("vault: write %s: %w", p, ErrIsDir)
	case errors.Is(err, gitlog.ErrNotDir):
		return fmt.Errorf("vault: write %s: %w", p, ErrNotDir)
	case err != nil && !errors.Is(err, gitlog.ErrNotFound):
		return fmt.Errorf("vault: write %s: %w", p, err)
	}
	if err == nil && len(bytes.TrimSpace(plain)) == 0 {
		// Written blank over a file: emptied, unless it was blank already.
		if n, err := tx.v.fileSizeIn(tx.names, p, e.Hash); err != nil || n > int64(len(plain)) {
			tx.emptied++
		}
	}
	if limits.limited() {
		cp, _ := CleanPath(p)
		var old Usage
		if err == nil {
			if old, err = tx.v.entryUsage(ctx, tx.names, cp, e); err != nil {
				return err
			}
		}
		g := tx.grow
		g.add(cp, 1-old.Files, int64(len(plain))-old.Bytes)
		if err := tx.v.checkGrowth(ctx, tx.Snapshot, g); err != nil {
			return err
		}
		tx.grow = g
	}
	rs, err := tx.recipients()
	if err != nil {
		return err
	}
	ct, err := tx.names.blob(plain, rs)
	if err != nil {
		return err
	}
	tx.written = append(tx.written, writtenBlob{hash: gitlog.BlobHash(ct), plain: bytes.Clone(plain)})
	return tx.stage(p, "", gitlog.Change{Op: gitlog.Put, Path: tp, Data: ct})
}

// Remove stages the removal of the file or directory at p. The error wraps
// ErrNotExist if nothing is there and ErrRoot for /memories itself.
func (tx *Tx) Remove(p string) error {
	tp, err := tx.names.treePath(p)
	if err != nil {
		return err
	}
	if tp == memDir {
		return fmt.Errorf("vault: remove %s: %w", p, ErrRoot)
	}
	e, found, err := tx.lookup(p)
	if err != nil {
		return err
	} else if !found {
		return fmt.Errorf("vault: remove %s: %w", p, ErrNotExist)
	}
	tx.removed = append(tx.removed, e)
	if tx.v.limits.limited() {
		// Counted so that later writes in the same Tx may use the room.
		cp, _ := CleanPath(p)
		u, err := tx.v.entryUsage(context.Background(), tx.names, cp, e)
		if err != nil {
			return err
		}
		tx.grow.add(cp, -u.Files, -u.Bytes)
	}
	return tx.stage(p, "", gitlog.Change{Op: gitlog.Delete, Path: tp})
}

// Rename stages the move of the file or directory at oldPath to newPath, creating
// newPath's parents. The error wraps ErrRoot if either is /memories, ErrNotExist if
// oldPath is missing, ErrExist if newPath exists, ErrInvalid if newPath is inside
// oldPath and ErrNotDir if an ancestor of newPath is a file.
func (tx *Tx) Rename(oldPath, newPath string) error {
	from, err := tx.names.treePath(oldPath)
	if err != nil {
		return err
	}
	to, err := tx.names.treePath(newPath)
	if err != nil {
		return err
	}
	if from == memDir || to == memDir {
		return fmt.Errorf("vault: rename %s: %w", oldPath, ErrRoot)
	}
	src, found, err := tx.lookup(oldPath)
	if err != nil {
		return err
	} else if !found {
		return fmt.Errorf("vault: rename %s: %w", oldPath, ErrNotExist)
	}
	_, err = tx.v.repo.Lookup(tx.root, to)
	switch {
	case err == nil:
		return fmt.Errorf("vault: rename to %s: %w", newPath, ErrExist)
	case errors.Is(err, gitlog.ErrNotDir):
		return fmt.Errorf("vault: rename to %s: %w", newPath, ErrNotDir)
	case !errors.Is(err, gitlog.ErrNotFound):
		return fmt.Errorf("vault: rename: %w", err)
	case strings.HasPrefix(to, from+"/"):
		return fmt.Errorf("vault: rename %s into itself: %w", oldPath, ErrInvalid)
	}
	if tx.names.foldersBindNames() && src.IsDir() {
		return tx.moveSealedDir(oldPath, newPath, from, to, src.Hash)
	}
	return tx.stage(oldPath, newPath, gitlog.Change{Op: gitlog.Move, Path: from, NewPath: to})
}

// RenameOver is Rename, except that a file at newPath is replaced when oldPath
// is a file too, as rename(2) replaces it (a folder mounted from the vault needs
// that for editors and atomic writers, which write a new file and rename it over
// the old one). A directory at newPath, or a directory at oldPath with a file at
// newPath, still gives ErrExist. Other errors are Rename's.
func (tx *Tx) RenameOver(oldPath, newPath string) error {
	from, err := tx.names.treePath(oldPath)
	if err != nil {
		return err
	}
	to, err := tx.names.treePath(newPath)
	if err != nil {
		return err
	}
	src, srcFound, err := tx.lookup(oldPath)
	if err != nil {
		return err
	}
	dst, dstFound, err := tx.lookup(newPath)
	if err != nil {
		return err
	}
	if !srcFound || !dstFound || src.IsDir() || dst.IsDir() || from == memDir || to == memDir {
		return tx.Rename(oldPath, newPath)
	}
	return tx.stage(oldPath, newPath, gitlog.Change{Op: gitlog.Move, Path: from, NewPath: to})
}

// stage adds c to the commit. The commit's subject and trailers name the first
// change's paths; a bulk change (an import, a re-encryption) counts the rest.
func (tx *Tx) stage(p, newPath string, c gitlog.Change) error {
	if len(tx.changes) == 0 {
		tx.path, _ = CleanPath(p)
		if newPath != "" {
			tx.newPath, _ = CleanPath(newPath)
		}
	}
	tx.changes = append(tx.changes, c)
	return nil
}

// recipients returns the recipients the snapshot's files are encrypted to,
// remembered by the hash of the recipients file.
func (tx *Tx) recipients() ([]ageRecipient, error) {
	e, err := tx.v.repo.Lookup(tx.root, recipientsPath)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", recipientsPath, err)
	}
	k := tx.v.keys
	k.rmu.Lock()
	rs, ok := k.byBlob[e.Hash]
	k.rmu.Unlock()
	if ok {
		return rs, nil
	}
	content, err := tx.v.repo.ReadBlob(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", recipientsPath, err)
	}
	if rs, err = k.parseRecipients(content); err != nil {
		return nil, err
	}
	k.rmu.Lock()
	if len(k.byBlob) > 64 {
		clear(k.byBlob)
	}
	k.byBlob[e.Hash] = rs
	k.rmu.Unlock()
	return rs, nil
}

func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
}
