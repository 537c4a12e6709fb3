package vault

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// What admission checks in a tree of the sealed format, beyond the plain
// format's rules: the vault key in .memvault/key is an age file this
// identity opens, and .memvault/format says 2 exactly when the key is there;
// every stored name under memories/ opens under that key within its folder
// (a name that does not is refused by its stored form, since it has no
// other), and the opened path keeps the memory tool's rules; every memory
// blob is a size header that opens under the key, then an age file within
// the limits.
//
// Who can bring a new key: age files carry no sender, and the recipients are
// public, so anyone (the host included) can write a key file this identity
// opens, and seal names under it. What binds a key to a writer is the commit
// that puts it: admission takes a commit only when a writer listed in its
// parent's tree signed it (signing.go), and checks signatures before a tree is
// believed. A key the host made can only arrive in a commit no writer signed,
// and is refused with that commit.

// keyOpener opens the vault key file blob of the tree root: (*Vault).sealKeyBlob.
type keyOpener func(blob, root gitlog.Hash) (*seal.Key, error)

// sealing is what admission knows of the sealed format while it checks one
// commit's tree.
type sealing struct {
	openKey keyOpener
	// keyBlobs caches, by the hash of a .memvault tree, the hash of its key
	// file (ZeroHash: none): .memvault changes seldom, so a commit costs no
	// lookup.
	keyBlobs map[gitlog.Hash]gitlog.Hash
	// Of the commit being checked: its root tree, the hash of its .memvault
	// tree, its key once read (keyRead), whether that key failed to open
	// (then its names go unchecked: the key is refused), and the opened
	// memory path of each folder (tree path -> memory path).
	root, metaTree gitlog.Hash
	keyRead        bool
	keyBroken      bool
	key            *seal.Key
	plain          map[string]string
	// badKeys are the key blobs refused already, named once.
	badKeys map[gitlog.Hash]bool
}

// metaHash is the hash of the .memvault entry of a root tree's entries, or
// ZeroHash.
func metaHash(es []gitlog.Entry) gitlog.Hash {
	for _, e := range es {
		if e.Name == ".memvault" {
			return e.Hash
		}
	}
	return gitlog.ZeroHash
}

// keyBlob returns the hash of the key file in the .memvault tree meta, or
// ZeroHash when there is none (or no such tree).
func (a *admission) keyBlob(meta gitlog.Hash) gitlog.Hash {
	if meta.IsZero() {
		return gitlog.ZeroHash
	}
	if h, ok := a.keyBlobs[meta]; ok {
		return h
	}
	var h gitlog.Hash
	if es, err := a.repo.ReadTree(meta); err == nil {
		for _, e := range es {
			if e.Name == "key" && e.Mode == modeRegular {
				h = e.Hash
			}
		}
	}
	if a.keyBlobs == nil {
		a.keyBlobs = map[gitlog.Hash]gitlog.Hash{}
	}
	a.keyBlobs[meta] = h
	return h
}

// sameKey says whether the root trees whose entries are es and pe hold the
// same vault key (or none): only then does an entry equal to the parent's
// hold a name sealed under this tree's key.
func (a *admission) sameKey(es, pe []gitlog.Entry) bool {
	m, pm := metaHash(es), metaHash(pe)
	return m == pm || a.keyBlob(m) == a.keyBlob(pm)
}

// enterRoot starts the check of a commit's root tree root, whose entries are es.
func (a *admission) enterRoot(root gitlog.Hash, es []gitlog.Entry) {
	a.root, a.metaTree = root, metaHash(es)
	a.keyRead, a.keyBroken, a.key, a.plain = false, false, nil, nil
}

// treeKey returns the vault key of the tree being checked, read once per
// commit, or nil for the plain format and for a key that does not open (it is
// refused, once, and keyBroken set).
func (a *admission) treeKey(c gitlog.Hash) (*seal.Key, error) {
	if a.keyRead {
		return a.key, nil
	}
	a.keyRead = true
	h := a.keyBlob(a.metaTree)
	if h.IsZero() {
		return nil, nil
	}
	if a.openKey == nil {
		a.keyBroken = true
		a.refuseKey(c, h, "a vault key this check has no identity to open")
		return nil, nil
	}
	k, err := a.openKey(h, a.root)
	switch {
	case err == nil:
		a.key, a.plain = k, map[string]string{memDir: Root}
	case errors.Is(err, ErrDecrypt), errors.Is(err, ErrBadEntry):
		a.keyBroken = true
		a.refuseKey(c, h, "a vault key that does not open for this identity")
	default:
		return nil, err
	}
	return a.key, nil
}

func (a *admission) refuseKey(c, h gitlog.Hash, reason string) {
	if a.badKeys[h] {
		return
	}
	if a.badKeys == nil {
		a.badKeys = map[gitlog.Hash]bool{}
	}
	a.badKeys[h] = true
	names := a.names
	a.names = []string{".memvault", "key"}
	a.refuse(c, keyPath, reason)
	a.names = names
}

// openStored checks the stored name of entry e at tree path p in the memory
// folder at tree path dir: it must open under k, and the memory path it opens
// to must pass CleanPath. It reports whether the entry may be checked further.
func (a *admission) openStored(c gitlog.Hash, k *seal.Key, dir, p string, e gitlog.Entry) bool {
	parent, ok := a.plain[dir]
	if !ok {
		a.refuse(c, p, "a name in a folder whose name does not open")
		return false
	}
	name, err := k.OpenName(parent, e.Name)
	if err != nil {
		a.refuse(c, p, reasonUnopened)
		return false
	}
	mp := parent + "/" + name
	if _, err := CleanPath(mp); err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			a.refuse(c, p, "a sealed name that opens to an invalid path ("+pe.Reason+")")
		} else {
			a.refuse(c, p, "a sealed name that opens to no memory path")
		}
		return false
	}
	if e.IsDir() {
		a.plain[p] = mp
	}
	return true
}

// sealedBlob checks the memory blob of entry e at p in a sealed tree: a size
// header, then an age file; the size fits the limits and the header opens
// under k. As for the plain format, the payload is never read.
func (a *admission) sealedBlob(c gitlog.Hash, k *seal.Key, p string, e gitlog.Entry) error {
	limit := int64(seal.SizeHeaderLen) + maxCiphertext(seal.PaddedLen(a.limits.MaxFileSize))
	for _, want := range []int{sizePrefix, ageHeaderSlack + seal.SizeHeaderLen} {
		head, n, err := a.repo.BlobPrefix(e.Hash, want)
		if errors.Is(err, gitlog.ErrWrongType) {
			a.refuse(c, p, "not a blob")
			return nil
		}
		if err != nil {
			return fmt.Errorf("vault: admit: %w", err)
		}
		if n > limit {
			a.refuse(c, p, fmt.Sprintf("%d bytes, over the limit of %d", n, limit))
			return nil
		}
		if !seal.HasSizeHeader(head) {
			a.refuse(c, p, "no sealed size header")
			return nil
		}
		body := head[seal.SizeHeaderLen:]
		if !bytes.HasPrefix(body, []byte(ageMagic)) {
			a.refuse(c, p, "not an age file after its size header")
			return nil
		}
		if reason := ageReason(body, n-int64(seal.SizeHeaderLen)); reason != "" {
			if int64(len(head)) >= n || want != sizePrefix {
				a.refuse(c, p, reason)
				return nil
			}
			continue
		}
		size, err := k.OpenBlobSize(head)
		switch {
		case errors.Is(err, seal.ErrNoAgeHeader):
			a.refuse(c, p, "a damaged age file (no complete header)")
		case err != nil:
			a.refuse(c, p, "a size header not sealed under this vault's key")
		case size > a.limits.MaxFileSize:
			a.refuse(c, p, fmt.Sprintf("a file of %d bytes, over the limit of %d", size, a.limits.MaxFileSize))
		}
		return nil
	}
	return nil
}

// formatAndKey refuses a new .memvault tree h whose format and key disagree:
// format 2 with no key, or a key in a tree of another format.
func (a *admission) formatAndKey(c, h gitlog.Hash) error {
	es, err := a.repo.ReadTree(h)
	if err != nil {
		return nil // refused as not a tree already
	}
	var format, key *gitlog.Entry
	for i := range es {
		switch es[i].Name {
		case "format":
			format = &es[i]
		case "key":
			key = &es[i]
		}
	}
	if format == nil {
		return nil
	}
	data, reason, err := a.blob(format.Hash, maxMetaFile)
	if err != nil || reason != "" {
		return err // refused as a meta file already
	}
	sealed := sealedFormat(strings.TrimSpace(string(data)))
	names := a.names
	defer func() { a.names = names }()
	switch {
	case sealed && key == nil:
		a.names = []string{".memvault", "format"}
		a.refuse(c, formatPath, "a sealed format with no .memvault/key")
	case !sealed && key != nil:
		a.names = []string{".memvault", "key"}
		a.refuse(c, keyPath, "a vault key in a tree that is not of a sealed format")
	}
	return nil
}
