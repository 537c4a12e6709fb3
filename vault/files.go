package vault

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/memvault/memvault/gitlog"
)

// Files lists the memory path of every file in the snapshot, in byte order:
// "/memories/a.md", "/memories/notes/b.md". It reads trees only, no file.
func (s *Snapshot) Files(ctx context.Context) ([]string, error) {
	refs, err := s.v.memoryFiles(s.root)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := s.names.memPath(r.path)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// ReadableFiles lists, as Files does, the memory path of every file in the
// snapshot, in byte order, but goes on past each entry a read refuses by the
// tree alone (see ErrBadEntry: a name that does not open in a sealed vault, a
// name no memory path has, a symbolic link, a folder that is no tree) and
// returns those as bad, by path as Status names them. It reads trees only, no
// file: a file it lists may still fail to read with an *EntryError (a damaged
// age file). Files, which push and pull use, fails at the first instead.
func (s *Snapshot) ReadableFiles(ctx context.Context) (files []string, bad []EntryError, err error) {
	refs, bad, err := s.v.readableMemory(s.root, s.names)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	files = make([]string, len(refs))
	for i, r := range refs {
		files[i] = memPath(r.path)
	}
	sort.Strings(files)
	return files, bad, nil
}

// memoryNotAFolder is the bad entry of a tree whose memories/ is no folder.
var memoryNotAFolder = EntryError{Path: Root, Reason: "not a directory in the vault's tree"}

// readableMemory lists the memory files of the tree root, whose names are
// ns, as readableFiles does, and returns the entries it went on past.
func (v *Vault) readableMemory(root gitlog.Hash, ns codec) (files []fileRef, bad []EntryError, err error) {
	e, err := v.repo.Lookup(root, memDir)
	switch {
	case err != nil:
		return nil, nil, nil // no memory yet
	case !e.IsDir():
		return nil, []EntryError{memoryNotAFolder}, nil
	}
	files, err = v.readableFiles(ns, Root, e.Hash, func(p, reason string) {
		bad = append(bad, EntryError{Path: p, Reason: reason})
	})
	return files, bad, err
}

// fileRef is one memory file of a tree: its tree path and ciphertext blob.
type fileRef struct {
	path string
	hash gitlog.Hash
}

// memoryFiles lists every file under memories/ in the tree root, depth first.
func (v *Vault) memoryFiles(root gitlog.Hash) ([]fileRef, error) {
	e, err := v.repo.Lookup(root, memDir)
	if err != nil {
		return nil, nil // no memory yet
	}
	return v.filesUnder(memDir, e.Hash)
}

// filesUnder lists the files under the directory at tree path tp (tree h),
// by their names as stored, depth first, stopping at the first tree that does
// not read: what Files, sharing, conversion and re-encryption walk.
func (v *Vault) filesUnder(tp string, h gitlog.Hash) ([]fileRef, error) {
	return v.walkFiles(plainCodec{}, memPath(tp), h, false, stopAtBadEntry)
}

// walkFiles is the one walk of a memory tree: it lists the files of the
// memory folder dir ("/memories/…") whose tree is h and whose names are ns,
// each by its plaintext tree path ("memories/notes/a.md"), each stored name
// opened once (see openedTree), each folder in git's order of its opened
// names, so the paths come in byte order.
//
// An entry it cannot take as a file or a folder goes to bad, with its folder,
// its name as stored and the error a read of it fails with: a name that does
// not open (an *EntryError), a folder entry naming no tree (wrapping
// gitlog.ErrWrongType), and, when judge, an entry a read refuses by its name
// or mode alone (an *EntryError, see entryReason). bad returns nil to leave
// the entry out and go on, or the error to end the walk with.
func (v *Vault) walkFiles(ns codec, dir string, h gitlog.Hash, judge bool, bad func(dir, name string, err error) error) ([]fileRef, error) {
	var out []fileRef
	var walk func(dir string, h gitlog.Hash) error
	walk = func(dir string, h gitlog.Hash) error {
		es, err := v.openedTree(ns, h, dir)
		if err != nil {
			return fmt.Errorf("vault: list %s: %w", dir, err)
		}
		for _, c := range es {
			if c.err == nil && judge {
				if reason := entryReason(dir, c.Entry); reason != "" {
					c.err = badEntry(entryPath(dir, c.Name), reason)
				}
			}
			if c.err != nil {
				if err := bad(dir, c.Name, c.err); err != nil {
					return err
				}
				continue
			}
			p := dir + "/" + c.Name
			if !c.IsDir() {
				out = append(out, fileRef{path: p[1:], hash: c.Hash})
				continue
			}
			err := walk(p, c.Hash)
			if errors.Is(err, gitlog.ErrWrongType) {
				err = bad(dir, c.Name, err)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(dir, h)
}

// stopAtBadEntry is the bad entry handler of a walk that fails at the first.
func stopAtBadEntry(_, _ string, err error) error { return err }
