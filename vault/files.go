package vault

import (
	"context"
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
// depth first: the one walk of a memory tree that grep, re-encryption, expiry,
// status and Files share.
func (v *Vault) filesUnder(tp string, h gitlog.Hash) ([]fileRef, error) {
	var out []fileRef
	var walk func(dir string, h gitlog.Hash) error
	walk = func(dir string, h gitlog.Hash) error {
		es, err := v.repo.ReadTree(h)
		if err != nil {
			return fmt.Errorf("vault: list %s: %w", memPath(dir), err)
		}
		for _, c := range es {
			p := dir + "/" + c.Name
			if c.IsDir() {
				if err := walk(p, c.Hash); err != nil {
					return err
				}
				continue
			}
			out = append(out, fileRef{path: p, hash: c.Hash})
		}
		return nil
	}
	return out, walk(tp, h)
}
