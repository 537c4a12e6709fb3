package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// Key generations (format 3; docs/membership.md). Each vault key is a
// generation with an age identity of its own, kept in the key file; every
// memory file of its trees is encrypted to the generation's recipient, and the
// key file to the members. .memvault/keychain holds every older generation,
// sealed under the current key, and names the key each older key file of the
// history wraps. So whoever opens the current key reads the whole history,
// and a member removed by a rotation, who holds only older keys, reads nothing
// after it.
const (
	generationsFormatVersion = "3"
	keychainPath             = ".memvault/keychain"
)

// sealedFormat reports whether format (a .memvault/format file's content,
// trimmed) is one of the sealed formats.
func sealedFormat(format string) bool {
	return format == sealedFormatVersion || format == generationsFormatVersion
}

// fileRecipients returns the recipients of a memory file sealed under k in a
// vault encrypted to rs: k's generation alone when k is one (format 3: the
// members open the generation through the key file, so one age stanza a
// file, whatever the number of members, and whoever opens the key reads
// every file of its trees), else rs.
func fileRecipients(rs []ageRecipient, k *seal.Key) []ageRecipient {
	if k == nil || !k.Generation() {
		return rs
	}
	return []ageRecipient{k.Recipient()}
}

// mixable reports whether age encrypts one file to rs and k's generation
// together: a generation is post-quantum exactly when its vault's members are.
func mixable(rs []ageRecipient, k *seal.Key) bool {
	_, err := encrypt(nil, append(rs[:len(rs):len(rs)], k.Recipient()))
	return err == nil
}

// newGeneration makes a vault key of format 3 for a vault encrypted to rs:
// its identity is post-quantum when rs are, since age refuses to mix the two
// kinds in one file (a classical generation would also be the weaker lock).
func newGeneration(rs []ageRecipient) (*seal.Key, error) {
	k, err := seal.NewGeneration(false)
	if err != nil {
		return nil, err
	}
	if mixable(rs, k) {
		return k, nil
	}
	k, err = seal.NewGeneration(true)
	if err != nil {
		return nil, err
	}
	if !mixable(rs, k) {
		_, err := encrypt(nil, append(rs[:len(rs):len(rs)], k.Recipient()))
		return nil, err
	}
	return k, nil
}

// generationIDs returns the age identities of every generation this vault has
// opened: what opens a memory file written before this identity was a
// member. They are tried after the identity itself.
func (s *sealKeys) generationIDs() []age.Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []age.Identity
	seen := map[string]bool{}
	add := func(k *seal.Key) {
		if k != nil && k.Generation() && !seen[k.Fingerprint()] {
			seen[k.Fingerprint()] = true
			ids = append(ids, k.Identity())
		}
	}
	for _, k := range s.byID {
		add(k)
	}
	for _, k := range s.chain.Keys {
		add(k)
	}
	return ids
}

// keychainAt returns the keychain of the tree root, opened under its key k;
// an empty one when the tree has none (format 2, or plain).
func (v *Vault) keychainAt(root gitlog.Hash, k *seal.Key) (seal.Keychain, error) {
	if k == nil {
		return seal.Keychain{}, nil
	}
	e, err := v.repo.Lookup(root, keychainPath)
	if errors.Is(err, gitlog.ErrNotFound) {
		return seal.Keychain{}, nil
	}
	if err != nil {
		return seal.Keychain{}, fmt.Errorf("vault: %s: %w", keychainPath, err)
	}
	if n, err := v.repo.ObjectSize(e.Hash); err != nil {
		return seal.Keychain{}, fmt.Errorf("vault: %s: %w", keychainPath, err)
	} else if n > seal.MaxKeychain {
		return seal.Keychain{}, badEntry(keychainPath, fmt.Sprintf("%d bytes, over the limit of %d", n, seal.MaxKeychain))
	}
	data, err := v.repo.ReadBlob(e.Hash)
	if err != nil {
		return seal.Keychain{}, fmt.Errorf("vault: %s: %w", keychainPath, err)
	}
	c, err := k.OpenKeychain(data)
	if err != nil {
		return seal.Keychain{}, badEntry(keychainPath, err.Error())
	}
	return c, nil
}

// learnKeychain adds the keychain of the tree root (whose key is k) to what
// this vault knows, once per keychain blob.
func (v *Vault) learnKeychain(root gitlog.Hash, k *seal.Key) {
	e, err := v.repo.Lookup(root, keychainPath)
	if err != nil {
		return
	}
	v.seals.mu.Lock()
	done := v.seals.chainsRead[e.Hash]
	v.seals.mu.Unlock()
	if done {
		return
	}
	c, err := v.keychainAt(root, k)
	if err != nil {
		return // a damaged keychain opens nothing: fsck names it
	}
	v.seals.mu.Lock()
	defer v.seals.mu.Unlock()
	if v.seals.chainsRead == nil {
		v.seals.chainsRead = map[gitlog.Hash]bool{}
	}
	v.seals.chainsRead[e.Hash] = true
	v.seals.chain.Merge(c)
	// The tree's own key too: an older key file may wrap it (a member
	// added keeps the key), and the keychain names that file by it.
	if kf, err := v.repo.Lookup(root, keyPath); err == nil {
		v.seals.chain.Add(k, kf.Hash.String())
	}
}

// keyFromChain returns the key the key file blob h wraps, as a keychain this
// vault read names it. On a miss it reads the keychain of the head's tree
// first, and of also (a tree about to be admitted, whose key opens), when not
// zero.
func (v *Vault) keyFromChain(h gitlog.Hash, also gitlog.Hash) *seal.Key {
	find := func() *seal.Key {
		v.seals.mu.Lock()
		defer v.seals.mu.Unlock()
		k, _ := v.seals.chain.KeyOfFile(h.String())
		return k
	}
	if k := find(); k != nil {
		return k
	}
	roots := []gitlog.Hash{also}
	if head, err := v.repo.Head(); err == nil && !head.IsZero() {
		if hr, err := v.repo.RootTree(head); err == nil {
			roots = append(roots, hr)
		}
	}
	for _, root := range roots {
		if root.IsZero() {
			continue
		}
		e, err := v.repo.Lookup(root, keyPath)
		if err != nil || e.Hash == h {
			continue
		}
		k, err := v.sealKeyBlob(e.Hash, root)
		if err != nil {
			continue
		}
		v.learnKeychain(root, k)
		if k := find(); k != nil {
			return k
		}
	}
	return nil
}

// chainFor returns the keychain file of a tree whose key is next, made from a
// tree whose key was old (its key file the blob oldFile, zero for none) and
// whose keychain was chain: every older generation and key file, old's
// among them, and never next itself.
func chainFor(next, old *seal.Key, oldFile gitlog.Hash, chain seal.Keychain) ([]byte, error) {
	var c seal.Keychain
	c.Merge(chain)
	if old != nil {
		file := ""
		if !oldFile.IsZero() {
			file = oldFile.String()
		}
		c.Add(old, file)
	}
	return next.SealKeychain(c.Without(next))
}

// chainAfter returns the keychain file of a tree sealed under next that
// follows the tree root, sealed under old: root's keychain, old and the key
// file that wrapped it. A tree of format 2 has no keychain: the keychain then
// names every key file of the history from the head, each with the key it
// wraps as this identity opens it (one it cannot open is left out: whoever
// reads with the new keychain reads what this identity could), so that a
// member added later opens every tree's names.
func (v *Vault) chainAfter(ctx context.Context, root gitlog.Hash, old, next *seal.Key) ([]byte, error) {
	var c seal.Keychain
	if old.Generation() {
		var err error
		if c, err = v.keychainAt(root, old); err != nil {
			return nil, err
		}
	} else if err := v.historyKeyFiles(ctx, &c); err != nil {
		return nil, err
	}
	oldFile := gitlog.ZeroHash
	if e, err := v.repo.Lookup(root, keyPath); err == nil {
		oldFile = e.Hash
	}
	return chainFor(next, old, oldFile, c)
}

// historyKeyFiles adds to c every key file of the history from the head, and
// the key each wraps, where this identity opens it.
func (v *Vault) historyKeyFiles(ctx context.Context, c *seal.Keychain) error {
	head, err := v.repo.Head()
	if err != nil || head.IsZero() {
		return err
	}
	seen := map[gitlog.Hash]bool{}
	return eachCommit(ctx, v.repo, head, func(commit *gitlog.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := v.repo.Lookup(commit.TreeHash, keyPath)
		if err != nil || seen[e.Hash] {
			return nil
		}
		seen[e.Hash] = true
		if k, err := v.sealKeyAt(commit.TreeHash); err == nil && k != nil {
			c.Add(k, e.Hash.String())
		}
		return nil
	})
}

// mergeKeychain returns the keychain of a tree sealed under key that merges
// the commits cs: every older generation and key file their keychains name,
// their own keys and key files, all but key itself; and whether it differs
// from the first commit's keychain (ours, in a merge), which is then kept.
func (v *Vault) mergeKeychain(key *seal.Key, cs ...gitlog.Hash) ([]byte, bool, error) {
	var merged, first seal.Keychain
	for i, c := range cs {
		root, err := v.repo.RootTree(c)
		if err != nil {
			return nil, false, fmt.Errorf("vault: merge: %w", err)
		}
		k, err := v.sealKeyAt(root)
		if err != nil {
			return nil, false, err
		}
		if k == nil {
			continue
		}
		chain, err := v.keychainAt(root, k)
		if err != nil {
			return nil, false, err
		}
		if i == 0 {
			first = chain
		}
		merged.Merge(chain)
		if e, err := v.repo.Lookup(root, keyPath); err == nil {
			merged.Add(k, e.Hash.String())
		}
	}
	merged = merged.Without(key)
	if sameChain(merged, first) && len(cs) > 0 {
		if root, err := v.repo.RootTree(cs[0]); err == nil {
			if k, err := v.sealKeyAt(root); err == nil && sameKey(k, key) {
				return nil, false, nil
			}
		}
	}
	data, err := key.SealKeychain(merged)
	return data, true, err
}

// sameChain reports whether two keychains hold the same keys and name the
// same key files.
func sameChain(a, b seal.Keychain) bool {
	if len(a.Keys) != len(b.Keys) || len(a.Files) != len(b.Files) {
		return false
	}
	for _, k := range a.Keys {
		found := false
		for _, o := range b.Keys {
			found = found || o.Equal(k)
		}
		if !found {
			return false
		}
	}
	for f, fp := range a.Files {
		if b.Files[f] != fp {
			return false
		}
	}
	return true
}

// admitKey is the keyOpener of an admission of the history up to theirs: a
// tree's key file opened with this identity, or else the key a keychain names
// for it, the keychain of theirs (whose key file this identity must open) and
// of this clone's head. A member added later opens the key files of the
// trees since, and the older trees' keys through the keychain; what binds any
// of them to a writer is the signed commit that brought it, which admission
// checks first.
func (v *Vault) admitKey(theirs gitlog.Hash) keyOpener {
	var tipRoot gitlog.Hash
	if !theirs.IsZero() {
		tipRoot, _ = v.repo.RootTree(theirs)
	}
	return func(h, root gitlog.Hash) (*seal.Key, error) {
		k, err := v.sealKeyBlob(h, root)
		if errors.Is(err, ErrDecrypt) && root != tipRoot {
			if older := v.keyFromChain(h, tipRoot); older != nil {
				return older, nil
			}
		}
		return k, err
	}
}

// knownKeys returns cur (when not nil) and every other vault key this vault has
// opened or read from a keychain, each once.
func (s *sealKeys) knownKeys(cur *seal.Key) []*seal.Key {
	var out []*seal.Key
	add := func(k *seal.Key) {
		for _, o := range out {
			if o.Equal(k) {
				return
			}
		}
		out = append(out, k)
	}
	if cur != nil {
		add(cur)
	}
	for _, k := range s.all() {
		add(k)
	}
	s.mu.Lock()
	chain := append([]*seal.Key(nil), s.chain.Keys...)
	s.mu.Unlock()
	for _, k := range chain {
		add(k)
	}
	return out
}

// decryptFile opens the age file ct of memory file p in the tree root: with
// the tree's generation first (format 3 encrypts every file to it alone), else
// as the keyring opens files (the identity, the keys it retired, every
// generation read so far).
func (v *Vault) decryptFile(p string, ct []byte, root gitlog.Hash) ([]byte, error) {
	if !root.IsZero() {
		if k, err := v.sealKeyAt(root); err == nil && k != nil && k.Generation() {
			if plain, err := decryptWith(ct, k.Identity()); err == nil {
				return plain, nil
			}
		}
	}
	return v.keys.decryptAt(p, ct, root)
}

// decryptWith opens the age file ct with ids alone.
func decryptWith(ct []byte, ids ...age.Identity) ([]byte, error) {
	r, err := age.Decrypt(bytes.NewReader(ct), ids...)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
