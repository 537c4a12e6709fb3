package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// writerSet is a tree's writers; has is false when the tree has no writers
// file (a vault from before writers: its commits need no signature).
// removed are the keys removed as writers (.memvault/removed).
type writerSet struct {
	has     bool
	writers []keys.Writer
	removed []keys.Writer
}

// isRemoved reports whether pub was removed as a writer.
func (s writerSet) isRemoved(pub ssh.PublicKey) bool {
	_, ok := keys.FindWriter(s.removed, pub)
	return ok
}

func (s writerSet) find(pub ssh.PublicKey) (keys.Writer, bool) {
	return keys.FindWriter(s.writers, pub)
}

// writersCache parses each writers file once, by blob.
type writersCache struct {
	mu     sync.Mutex
	byBlob map[gitlog.Hash][]keys.Writer
}

// writersAt returns the writers of the tree root, and those removed.
func (c *writersCache) writersAt(repo *gitlog.Repo, root gitlog.Hash) (writerSet, error) {
	ws, has, err := c.keysFile(repo, root, keys.WritersPath)
	if err != nil || !has {
		return writerSet{}, err
	}
	removed, _, err := c.keysFile(repo, root, keys.RemovedPath)
	if err != nil {
		return writerSet{}, err
	}
	return writerSet{has: true, writers: ws, removed: removed}, nil
}

// keysFile returns the keys of the writers' file at path in the tree root,
// parsed once per blob; has is false when there is none.
func (c *writersCache) keysFile(repo *gitlog.Repo, root gitlog.Hash, path string) ([]keys.Writer, bool, error) {
	e, err := repo.Lookup(root, path)
	if errors.Is(err, gitlog.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	ws, ok := c.byBlob[e.Hash]
	c.mu.Unlock()
	if ok {
		return ws, true, nil
	}
	if n, err := repo.ObjectSize(e.Hash); err != nil {
		return nil, false, err
	} else if n > maxMetaFile {
		return nil, false, fmt.Errorf("%s is %d bytes, over the limit of %d", path, n, maxMetaFile)
	}
	content, err := repo.ReadBlob(e.Hash)
	if err != nil {
		return nil, false, err
	}
	if ws, err = keys.ParseWriters(content); err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	if c.byBlob == nil {
		c.byBlob = map[gitlog.Hash][]keys.Writer{}
	}
	c.byBlob[e.Hash] = ws
	c.mu.Unlock()
	return ws, true, nil
}

// The ways a commit's signature falls short.
var (
	errUnsigned    = errors.New("not signed")
	errBadSig      = errors.New("signed, but the signature does not verify")
	errNotAWriter  = errors.New("signed by a key that is not a writer of the vault")
	errNotWriterOf = errors.New("signed by a key that is not a writer in each of its parents")
)

// signedBy verifies commit c's signature against the writers of its
// parents' trees (of its own tree for a first commit), and returns the writer
// who signed it. A commit whose parents (or, for a first commit, its own
// tree) have no writers file needs no signature: ok is false and err nil.
func (c *writersCache) signedBy(repo *gitlog.Repo, commit *gitlog.Commit) (w keys.Writer, ok bool, err error) {
	var sets []writerSet
	roots := []gitlog.Hash{commit.TreeHash}
	if len(commit.ParentHashes) > 0 {
		roots = roots[:0]
		for _, p := range commit.ParentHashes {
			root, err := repo.RootTree(p)
			if err != nil {
				return w, false, err
			}
			roots = append(roots, root)
		}
	}
	for _, root := range roots {
		s, err := c.writersAt(repo, root)
		if err != nil {
			return w, false, err
		}
		if s.has {
			sets = append(sets, s)
		}
	}
	if len(sets) == 0 {
		return w, false, nil
	}
	pub, err := verifySignature(repo, commit.Hash)
	if err != nil {
		return w, false, err
	}
	for i, s := range sets {
		found, in := s.find(pub)
		switch {
		case !in && i == 0:
			return w, false, fmt.Errorf("%w (%s)", errNotAWriter, ssh.FingerprintSHA256(pub))
		case !in:
			return w, false, fmt.Errorf("%w (%s)", errNotWriterOf, ssh.FingerprintSHA256(pub))
		}
		w = found
	}
	return w, true, nil
}

// verifySignature checks commit h's signature over the bytes it covers and
// returns the key that made it.
func verifySignature(repo *gitlog.Repo, h gitlog.Hash) (ssh.PublicKey, error) {
	payload, armored, err := repo.SignedCommit(h)
	if err != nil {
		return nil, err
	}
	if armored == "" {
		return nil, errUnsigned
	}
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return nil, errBadSig
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, keys.SigNamespace); err != nil {
		return nil, errBadSig
	}
	return sig.PublicKey, nil
}

// Writers returns the writers listed at the head; has is false for a vault
// from before writers, whose commits need no signature.
func (v *Vault) Writers(ctx context.Context) (ws []keys.Writer, has bool, err error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, false, fmt.Errorf("vault: %w", err)
	}
	root, err := v.repo.RootTree(head)
	if err != nil {
		return nil, false, fmt.Errorf("vault: %w", err)
	}
	set, err := v.writers.writersAt(v.repo, root)
	if err != nil {
		return nil, false, fmt.Errorf("vault: %s: %w", keys.WritersPath, err)
	}
	return set.writers, set.has, nil
}

// SigningWriter is this identity's signing key as a writer line, to give to
// a writer of a vault who can add it (the key is made when there is none).
func (v *Vault) SigningWriter() (keys.Writer, error) {
	pub, err := v.sign.publicKey()
	if err != nil {
		return keys.Writer{}, err
	}
	return keys.WriterOf(pub, v.opts.Name), nil
}

// ChangeWriters adds and removes writers in one commit, signed by this
// identity's key, which must be a writer. remove names keys by their key or
// fingerprint. On a vault from before writers, the first change makes the
// writers file, with this identity's key first: from then on, every commit
// must be signed by a writer. Removing the last writer is refused.
func (v *Vault) ChangeWriters(ctx context.Context, meta Meta, add []keys.Writer, remove []string) ([]keys.Writer, error) {
	if meta.Command == "" {
		meta.Command = "writers"
	}
	me, err := v.SigningWriter()
	if err != nil {
		return nil, err
	}
	var out []keys.Writer
	_, err = v.updateWith(ctx, meta, func(tx *Tx) error {
		changes, ws, err := v.planWriters(tx.root, me, add, remove)
		out = ws
		tx.changes = append(tx.changes, changes...)
		return err
	}, func(subject *string, trailers *[]trailer) {
		*subject = "writers"
		*trailers = append(*trailers, writerTrailers(add, remove)...)
	})
	return out, err
}

// planWriters returns the changes of the writers file, and of the file of
// removed writers, that add and remove make to the tree root, and the
// writers after them. me is the writer a vault from before writers starts
// its list with. A writer added again is no longer a removed one; removing
// the last writer is refused.
func (v *Vault) planWriters(root gitlog.Hash, me keys.Writer, add []keys.Writer, remove []string) ([]gitlog.Change, []keys.Writer, error) {
	set, err := v.writers.writersAt(v.repo, root)
	if err != nil {
		return nil, nil, fmt.Errorf("vault: %s: %w", keys.WritersPath, err)
	}
	ws, gone := slices.Clone(set.writers), slices.Clone(set.removed) // the cache's: never changed in place
	if !set.has {
		ws = []keys.Writer{me}
	}
	for _, w := range add {
		if _, ok := (writerSet{writers: ws}).find(w.Public); !ok {
			ws = append(ws, w)
		}
		gone = slices.DeleteFunc(gone, func(o keys.Writer) bool { return o.Key == w.Key })
	}
	for _, r := range remove {
		i := slices.IndexFunc(ws, func(w keys.Writer) bool { return w.Key == r || w.Fingerprint == r || strings.HasPrefix(r, w.Key+" ") })
		if i < 0 {
			return nil, nil, fmt.Errorf("vault: %q is not a writer of the vault: %w", oneLine(r), ErrNotExist)
		}
		gone = append(gone, ws[i])
		ws = slices.Delete(ws, i, i+1)
	}
	if len(ws) == 0 {
		return nil, nil, fmt.Errorf("vault: that would leave the vault without a writer, and nobody could write it again: %w", ErrInvalid)
	}
	changes := []gitlog.Change{{Op: gitlog.Put, Path: keys.WritersPath, Data: keys.FormatWriters(ws)}}
	return append(changes, removedChange(set.removed, gone)...), ws, nil
}

// writerTrailers are the trailers of a change of writers.
func writerTrailers(add []keys.Writer, remove []string) []trailer {
	var out []trailer
	for _, w := range add {
		out = append(out, trailer{trWriter, "+ " + w.Key})
	}
	for _, r := range remove {
		out = append(out, trailer{trWriter, "- " + r})
	}
	return out
}

// writersOfCommit returns the writers of commit h's tree.
func (v *Vault) writersOfCommit(h gitlog.Hash) (writerSet, error) {
	root, err := v.repo.RootTree(h)
	if err != nil {
		return writerSet{}, err
	}
	return v.writers.writersAt(v.repo, root)
}

// mergedWriters is the set a merge of writers makes, as keys, never as
// lines: what ours holds, with what theirs added since base, without what
// theirs removed since base.
func mergedWriters(base, ours, theirs writerSet) []keys.Writer {
	in := func(s writerSet, w keys.Writer) bool { _, ok := s.find(w.Public); return ok }
	var out []keys.Writer
	for _, w := range ours.writers {
		if !in(base, w) || in(theirs, w) || !theirs.has {
			out = append(out, w)
		}
	}
	for _, w := range theirs.writers {
		if !in(base, w) && !in(ours, w) {
			out = append(out, w)
		}
	}
	return out
}

// checkWriters returns, unless it refuses, which keys a merge or fast-forward
// of ours and theirs would add to and remove from the writers this clone holds
// now, computed on the resulting set. Unless accept, a change is refused with
// an error wrapping ErrWritersChanged.
func (v *Vault) checkWriters(base, ours, theirs gitlog.Hash, accept bool) (added, removed []keys.Writer, err error) {
	var sets [3]writerSet
	for i, c := range []gitlog.Hash{base, ours, theirs} {
		var err error
		if sets[i], err = v.writersOfCommit(c); err != nil {
			return nil, nil, fmt.Errorf("vault: sync: %s: %w", keys.WritersPath, err)
		}
	}
	now := writerSet{has: sets[1].has || sets[2].has, writers: mergedWriters(sets[0], sets[1], sets[2])}
	if base == ours { // a fast-forward takes theirs as it is
		now = sets[2]
	}
	for _, w := range now.writers {
		if _, ok := sets[1].find(w.Public); !ok {
			added = append(added, w)
		}
	}
	for _, w := range sets[1].writers {
		if _, ok := now.find(w.Public); !ok {
			removed = append(removed, w)
		}
	}
	if len(added)+len(removed) == 0 || accept {
		return added, removed, nil
	}
	return added, removed, fmt.Errorf("vault: sync: %w; nothing was changed", ErrWritersChanged)
}

// mergeWriters is the writers file and the file of removed writers a merge
// of the trees makes, as sets of keys (see mergedWriters); removed is nil when
// the merge holds no removed writer.
func (v *Vault) mergeWriters(baseT, oursT, theirsT gitlog.Hash) (writers, removed []byte, err error) {
	var sets [3]writerSet
	for i, root := range []gitlog.Hash{baseT, oursT, theirsT} {
		if sets[i], err = v.writers.writersAt(v.repo, root); err != nil {
			return nil, nil, fmt.Errorf("vault: merge: %s: %w", keys.WritersPath, err)
		}
	}
	ws, gone := mergedMembers(sets[0], sets[1], sets[2])
	if len(gone) > 0 {
		removed = keys.FormatRemoved(gone)
	}
	return keys.FormatWriters(ws), removed, nil
}

// mergedMembers is mergedWriters, and the removed writers of the merge: those
// of either side, but one the other side added again since the base; and no
// key is both.
func mergedMembers(base, ours, theirs writerSet) (ws, gone []keys.Writer) {
	in := func(list []keys.Writer, w keys.Writer) bool { _, ok := keys.FindWriter(list, w.Public); return ok }
	for _, side := range [][2]writerSet{{ours, theirs}, {theirs, ours}} {
		for _, w := range side[0].removed {
			readded := in(side[1].writers, w) && !in(base.writers, w) && !in(side[1].removed, w)
			if !readded && !in(gone, w) {
				gone = append(gone, w)
			}
		}
	}
	for _, w := range mergedWriters(base, ours, theirs) {
		if !in(gone, w) {
			ws = append(ws, w)
		}
	}
	return ws, gone
}

// removedChange is the change that writes the file of removed writers gone,
// which was was before: none when they are the same, a deletion when gone is
// empty.
func removedChange(was, gone []keys.Writer) []gitlog.Change {
	if slices.EqualFunc(was, gone, func(a, b keys.Writer) bool { return a.Key == b.Key }) {
		return nil
	}
	if len(gone) == 0 {
		return []gitlog.Change{{Op: gitlog.Delete, Path: keys.RemovedPath}}
	}
	return []gitlog.Change{{Op: gitlog.Put, Path: keys.RemovedPath, Data: keys.FormatRemoved(gone)}}
}
