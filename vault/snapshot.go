package vault

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// Snapshot is the memory tree at one commit. It never changes; take a new one to
// see later commits.
type Snapshot struct {
	v      *Vault
	commit gitlog.Hash
	root   gitlog.Hash // root tree
	names  codec       // how memory paths are stored in root
}

// Snapshot returns the current state of the vault, at the head of main.
func (v *Vault) Snapshot(ctx context.Context) (*Snapshot, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	return v.snapshotAt(head)
}

func (v *Vault) snapshotAt(commit gitlog.Hash) (*Snapshot, error) {
	root, err := v.repo.RootTree(commit)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	k, err := v.sealKeyAt(root)
	if err != nil {
		return nil, err
	}
	return &Snapshot{v: v, commit: commit, root: root, names: v.codec(k)}, nil
}

// Commit is the hash of the commit the snapshot shows.
func (s *Snapshot) Commit() string { return s.commit.String() }

// MaxName is the longest file or folder name, in bytes, that the snapshot's
// format stores: 255 in the plain format, [seal.MaxName] (143) in the sealed
// one, whose stored names are longer than the names they seal. A path with a
// longer component is refused with a *PathError.
func (s *Snapshot) MaxName() int {
	return s.names.maxName()
}

// treePath maps a memory path to its place in the git tree:
// "/memories/notes/a.md" -> "memories/notes/a.md".
func treePath(p string) (string, error) {
	cp, err := CleanPath(p)
	if err != nil {
		return "", err
	}
	return memDir + strings.TrimPrefix(cp, Root), nil
}

// lookup finds the entry at memory path p; found is false when nothing is there,
// including when p descends through a file.
func (s *Snapshot) lookup(p string) (e gitlog.Entry, found bool, err error) {
	tp, err := s.names.treePath(p)
	if unsealable(err) {
		return e, false, nil // a sealed tree cannot hold it
	}
	if err != nil {
		return e, false, err
	}
	e, err = s.v.repo.Lookup(s.root, tp)
	if err == nil && tp == memDir && !e.IsDir() {
		return e, false, badEntry(Root, "not a directory in the vault's tree: memvault fsck tells more")
	}
	if errors.Is(err, gitlog.ErrNotFound) || errors.Is(err, gitlog.ErrNotDir) {
		if tp == memDir { // the root always exists, even before the first memory
			return gitlog.Entry{Name: memDir, Mode: dirMode}, true, nil
		}
		return e, false, nil
	}
	return e, err == nil, err
}

// Stat tells what is at memory path p. The error is a *PathError for an invalid
// path, or an I/O error.
func (s *Snapshot) Stat(p string) (Kind, error) {
	e, found, err := s.lookup(p)
	switch {
	case err != nil:
		return KindNone, err
	case !found:
		return KindNone, nil
	case e.IsDir():
		return KindDir, nil
	}
	return KindFile, nil
}

// ReadFile returns the plaintext of the memory file at p. The error wraps
// ErrNotExist when nothing is there, ErrIsDir for a directory, ErrNoIdentity when
// the identity cannot be read and ErrDecrypt when it cannot decrypt the file.
func (s *Snapshot) ReadFile(ctx context.Context, p string) ([]byte, error) {
	e, found, err := s.lookup(p)
	switch {
	case err != nil:
		return nil, err
	case !found:
		if err := s.unopened(p); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("vault: read %s: %w", p, ErrNotExist)
	case e.IsDir():
		return nil, fmt.Errorf("vault: read %s: %w", p, ErrIsDir)
	}
	if reason := entryReason(path.Dir(p), e); reason != "" {
		return nil, badEntry(p, reason)
	}
	return s.v.readBlobAt(p, e.Hash, s.root)
}

// unopened returns the bad entry that memory path p, found nowhere, names
// in a sealed tree: an entry of p's folder stored under p's last name as it
// is, which does not open under the tree's key. A listing shows such an
// entry by that name, so a read of it says what is wrong, as a read of a bad
// entry does in the plain format, rather than that nothing is there. nil
// when there is none.
func (s *Snapshot) unopened(p string) error {
	if s.names.key() == nil {
		return nil
	}
	cp, err := CleanPath(p)
	if err != nil || cp == Root {
		return nil
	}
	dir, name := path.Split(cp)
	dir = strings.TrimSuffix(dir, "/")
	tp, err := s.names.treePath(dir)
	if err != nil {
		return nil
	}
	if _, err := s.v.repo.Lookup(s.root, tp+"/"+name); err != nil {
		return nil
	}
	if _, err := s.names.child(dir, name); err == nil {
		return nil // the sealed name of another entry
	}
	return badEntry(cp, reasonUnopened)
}

func (v *Vault) readBlob(p string, h gitlog.Hash) ([]byte, error) {
	return v.readBlobAt(p, h, gitlog.Hash{})
}

// readBlobAt reads the blob h of the memory file p in the tree root (zero:
// not known), whose recipients an error names as the keys the file needs.
func (v *Vault) readBlobAt(p string, h gitlog.Hash, root gitlog.Hash) ([]byte, error) {
	if b, ok := v.cache.get(h); ok {
		return append([]byte(nil), b...), nil
	}
	ct, sealed, err := v.readMemoryBlob(p, h)
	if err != nil {
		return nil, err
	}
	plain, err := v.decryptFile(p, ct, root)
	if err != nil {
		return nil, err
	}
	if sealed {
		if plain, err = seal.Unpad(plain); err != nil {
			return nil, badEntry(p, "padding memvault did not write")
		}
	}
	v.cache.put(h, plain)
	return append([]byte(nil), plain...), nil
}

// List returns the children of the memory directory p, sorted by name in byte
// order, hidden names included. A file's Size is its plaintext length, read from
// the ciphertext's length without decrypting. The error wraps ErrNotExist when
// nothing is at p and ErrNotDir when p is a file.
func (s *Snapshot) List(ctx context.Context, p string) ([]Entry, error) {
	e, found, err := s.lookup(p)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("vault: list %s: %w", p, ErrNotExist)
	case !e.IsDir():
		return nil, fmt.Errorf("vault: list %s: %w", p, ErrNotDir)
	}
	p, _ = CleanPath(p) // sealed names are bound to the canonical path of their folder
	es, err := s.v.openedTree(s.names, e.Hash, p)
	if err != nil {
		return nil, s.v.blobError(p, err)
	}
	out := make([]Entry, 0, len(es))
	for _, oe := range es {
		c := oe.Entry
		ent := Entry{Name: c.Name, Dir: c.IsDir()}
		if oe.err != nil {
			ent.Dir, ent.Err = false, oe.err
		} else if reason := entryReason(p, c); reason != "" {
			ent.Dir, ent.Err = false, badEntry(entryPath(p, c.Name), reason)
		} else if !ent.Dir {
			ent.Size, ent.Err = s.v.fileSizeIn(s.names, p+"/"+c.Name, c.Hash)
			if ent.Err != nil && !errors.Is(ent.Err, ErrBadEntry) {
				return nil, ent.Err
			}
		}
		out = append(out, ent)
	}
	// git orders a directory as if its name ended in "/"; callers want plain byte order.
	sortEntries(out)
	return out, nil
}

// fileSizeIn is the plaintext size of memory file p in blob h of a tree whose
// names are ns: read from the age header and the blob's length in the plain
// format, from the sealed size header in the sealed one, never decrypting.
func (v *Vault) fileSizeIn(ns codec, p string, h gitlog.Hash) (int64, error) {
	if n, ok := v.cache.size(h); ok {
		return n, nil
	}
	n, err := ns.plainSize(v, p, h)
	if err != nil {
		return 0, err
	}
	v.cache.putSize(h, n)
	return n, nil
}
