package vault

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// A merge of sealed vaults works on stored names: under one key a path has one
// stored name, so git's trees line up as they do in the plain format, and a
// path changed on both sides is found by its stored name. What needs the
// plaintext is opened and sealed again under the merge's key: the merged
// files' blobs (a size header and padding), the paths the merge names as
// conflicts, where a moved file went (renames are read from the opened
// messages, and a folder's move re-seals every name below it), the name a
// file moved aside takes, and the merge commit's own message.

// errKeysDiffer is wrapped by a merge of sides whose trees hold different
// vault keys and that mergeKeys cannot bring under one.
var errKeysDiffer = errors.New("the two sides are sealed with different vault keys")

// keyBlob returns the hash of the vault key file of root tree t, or ZeroHash
// for a tree of the plain format.
func (m *merger) keyBlob(t gitlog.Hash) (gitlog.Hash, error) {
	e, err := m.v.repo.Lookup(t, keyPath)
	switch {
	case errors.Is(err, gitlog.ErrNotFound):
		return gitlog.ZeroHash, nil
	case err != nil:
		return gitlog.ZeroHash, fmt.Errorf("vault: merge: %s: %w", keyPath, err)
	}
	return e.Hash, nil
}

// mergeKey sets m.key, the key the merge's names are sealed with: the one key
// of base, ours and theirs, or nil when all three are of the plain format.
// Key files that differ may hold one key (a recipient added re-encrypts the
// file, not the key); sides of different keys are brought under one by
// mergeKeys (merge_rotated.go), or refused with an error wrapping
// errKeysDiffer.
func (m *merger) mergeKey() error {
	trees := [3]gitlog.Hash{m.baseT, m.oursT, m.theirsT}
	var hs [3]gitlog.Hash
	for i, t := range trees {
		var err error
		if hs[i], err = m.keyBlob(t); err != nil {
			return err
		}
	}
	if hs[0] == hs[1] && hs[1] == hs[2] {
		if hs[1].IsZero() {
			return nil
		}
		k, err := m.v.v.sealKeyAt(m.oursT)
		m.key = k
		return err
	}
	var ks [3]*seal.Key
	var fps [3]string
	for i, t := range trees {
		k, err := m.v.v.sealKeyAt(t)
		if err != nil {
			return err
		}
		if ks[i] = k; k != nil {
			fps[i] = k.Fingerprint()
		}
	}
	if fps[0] == fps[1] && fps[1] == fps[2] && fps[1] != "" {
		m.key = ks[1]
		return nil
	}
	return m.mergeKeys(fps, ks)
}

// settleKeyFile makes sure the merge's tree holds a key file the merged
// recipients open: the one the result keeps when it is encrypted to them
// (ours's, or across a rotation the rotated side's), else the merge's key
// encrypted to them anew. It is never merged by lines.
func (m *merger) settleKeyFile(handled map[string]bool) error {
	if m.key == nil {
		return nil
	}
	handled[keyPath] = true
	ok := m.oursRecips
	switch {
	case m.rot != nil && m.rot.fresh:
		ok = false // a new generation: no side holds its key file
	case m.rot != nil && m.rot.theirs:
		ok = m.theirsRecips
	}
	if ok {
		return nil
	}
	ct, err := m.v.v.keyFile(m.key, m.recipients)
	if err != nil {
		return err
	}
	m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: keyPath, Data: ct})
	return nil
}

// settleKeychain makes the merge's keychain (format 3) hold every older key
// and key file of both sides and the base, sealed under the merge's key; it
// is never merged by lines. Ours's is kept when it holds them all already.
func (m *merger) settleKeychain(handled map[string]bool) error {
	handled[keychainPath] = true
	if m.key == nil || !m.key.Generation() {
		return nil
	}
	data, changed, err := m.v.v.mergeKeychain(m.key, m.ours, m.theirs, m.base)
	if err != nil || !changed {
		return err
	}
	m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: keychainPath, Data: data})
	return nil
}

// encrypt makes the blob of memory file p from its plaintext: an age file to
// the merged recipients, in the sealed format under the merge's key.
func (m *merger) encrypt(plain []byte) ([]byte, error) {
	return m.codec().blob(plain, m.recipients)
}

// codec is how the merged tree stores memory: sealed under the merge's key,
// or plain when it has none.
func (m *merger) codec() codec { return codecOf(m.key, nil) }

// openTree returns the plaintext tree path ("memories/a/b.md") of tree path
// tp under the merge's key; tp itself in the plain format. The error wraps
// ErrBadEntry when a stored name does not open.
func (m *merger) openTree(tp string) (string, error) {
	if !isMemory(tp) {
		return tp, nil
	}
	p, err := m.codec().plainTreePath(tp)
	if err != nil {
		return "", fmt.Errorf("vault: merge: a name not sealed under this vault's key: %w", ErrBadEntry)
	}
	return p, nil
}

// sealTree is openTree undone: the tree path that stores the plaintext tree
// path p. The error wraps seal.ErrNameTooLong for a name the format cannot
// store.
func (m *merger) sealTree(p string) (string, error) {
	if m.key == nil || !isMemory(p) {
		return p, nil
	}
	s, err := m.key.SealPath(Root, "/"+p)
	if err != nil {
		return "", err
	}
	return memDir + "/" + s, nil
}

// memoryPaths turns the tree paths of conflicts ("/memories/X/Y") into the
// memory paths they store.
func (m *merger) memoryPaths(ps []string) ([]string, error) {
	out := make([]string, len(ps))
	for i, p := range ps {
		q, err := m.openTree(strings.TrimPrefix(p, "/"))
		if err != nil {
			return nil, err
		}
		out[i] = "/" + q
	}
	return out, nil
}
