package vault

import (
	"errors"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// sameKeyAs finds the vault key of the sealed tree root, whose key file this
// identity could not open (keyErr), among the keys it can open: those read
// so far, and the current tree's. A recipient added to a vault reads the key
// file of the trees from then on, not of those before; adding a recipient
// does not change the key, so the older trees are sealed under the very key
// it holds, and their messages and names open with it as the plain format's
// history shows to every recipient. A key is taken only when it opens a name
// of root's memory folder (names are authenticated, so no other key does);
// a tree with no memory file is taken to share the current key. Nil when none
// is found, or when keyErr is not a key file this identity cannot decrypt.
//
// This grants nothing the identity does not hold: a key removed from the
// recipients is rotated away, and the trees after that are sealed under a new
// key no older one opens.
func (v *Vault) sameKeyAs(root gitlog.Hash, keyErr error) *seal.Key {
	if !errors.Is(keyErr, ErrDecrypt) {
		return nil
	}
	candidates := v.seals.all()
	if head, err := v.repo.Head(); err == nil && !head.IsZero() {
		if hr, err := v.repo.RootTree(head); err == nil && hr != root {
			if k, err := v.sealKeyAt(hr); err == nil && k != nil {
				candidates = append([]*seal.Key{k}, candidates...)
			}
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	e, err := v.repo.Lookup(root, memDir)
	if errors.Is(err, gitlog.ErrNotFound) {
		return candidates[0] // no name to seal: the first commit's tree
	}
	if err != nil || !e.IsDir() {
		return nil
	}
	es, err := v.repo.ReadTree(e.Hash)
	if err != nil || len(es) == 0 {
		return nil
	}
	for _, k := range candidates {
		if _, err := k.OpenName(Root, es[0].Name); err == nil {
			return k
		}
	}
	return nil
}

// all is every vault key read so far.
func (s *sealKeys) all() []*seal.Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*seal.Key, 0, len(s.byID))
	for _, k := range s.byID {
		out = append(out, k)
	}
	return out
}
