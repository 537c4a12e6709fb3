package vault

import (
	"errors"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// sameKeyAs finds the vault key of the sealed tree root, whose key file this
// identity could not open (keyErr), among the keys it can open: the head's
// first, then those read so far. A recipient added to a vault reads the key
// file of the trees from then on, not of those before; adding a recipient
// does not change the key, so the older trees are sealed under a key it
// holds, and their messages and names open with it as the plain format's
// history shows to every recipient. A key is taken only when it opens a name
// of root's memory folder (names are authenticated, so no other key does);
// a tree with no memory file is taken to share the head's key. Nil when none
// is found, or when keyErr is not a key file this identity cannot decrypt.
//
// The head's own tree is never read this way: its key must open from its key
// file, so what this clone writes next is sealed under a key given to the
// current recipients, never under a retired one a removed recipient holds.
// An older tree may open under a retired key this identity read from an older
// key file; that believes no more than the tree's own key file could (anyone
// who can write the vault's folder can put there a key of their own,
// encrypted to this identity): what a commit says is worth its signature,
// which log shows, and sync admits only trees whose key file opens.
func (v *Vault) sameKeyAs(root gitlog.Hash, keyErr error) *seal.Key {
	if !errors.Is(keyErr, ErrDecrypt) {
		return nil
	}
	head, err := v.repo.Head()
	if err != nil || head.IsZero() {
		return nil
	}
	hr, err := v.repo.RootTree(head)
	if err != nil || hr == root {
		return nil
	}
	headKey, err := v.sealKeyAt(hr)
	if err != nil || headKey == nil {
		return nil
	}
	e, err := v.repo.Lookup(root, memDir)
	if errors.Is(err, gitlog.ErrNotFound) {
		return headKey // no name to seal: the first commit's tree
	}
	if err != nil || !e.IsDir() {
		return nil
	}
	es, err := v.repo.ReadTree(e.Hash)
	if err != nil || len(es) == 0 {
		return nil
	}
	for _, k := range append([]*seal.Key{headKey}, v.seals.all()...) {
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

// olderKey finds the vault key of the sealed tree root, whose key file h this
// identity could not open (keyErr): the key a keychain names for that file
// (format 3: every older key file of the history is named in the current
// keychain, so a member added later opens every tree), else one of the keys
// it holds that opens the tree's names (sameKeyAs, for a history of format 2).
// The head's own tree is never read this way (see sameKeyAs).
func (v *Vault) olderKey(root, h gitlog.Hash, keyErr error) *seal.Key {
	if !errors.Is(keyErr, ErrDecrypt) {
		return nil
	}
	if head, err := v.repo.Head(); err != nil || head.IsZero() {
		return nil
	} else if hr, err := v.repo.RootTree(head); err != nil || hr == root {
		return nil
	}
	if k := v.keyFromChain(h, gitlog.ZeroHash); k != nil {
		return k
	}
	return v.sameKeyAs(root, keyErr)
}
