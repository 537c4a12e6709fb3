package vault

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// A merge across a key rotation. One side rotated the vault key since the
// base (a recipient was removed, or an identity rekeyed), so every stored name
// and size header differs between it and the other side. The rotated side's
// key is the merge's: the base and the other side are translated to it first,
// as trees written for the merge alone (each name opened under the old key and
// sealed under the new one, blobs as they are, the key file the new one), and
// the merge is planned on those as on any merge of one key. When the side
// translated is ours, the commit's changes start with the same translation of
// ours's tree, its blobs' size headers sealed again; a blob the plan links
// from a translated tree gets its size header sealed again too. The rest is
// done by the merge as it is: a rotation removed a recipient, so the files of
// the other side are encrypted again to the merged recipients.
//
// A conversion of a plain vault to the sealed format is crossed the same
// way: the plain base and side are the side under an older key, with no key
// (old is nil), their names taken as they are. Their blobs have no size
// header and no padding, so each one the merge keeps from them is encrypted
// again, padded and headed (resealBlob), instead of having its header sealed
// again; the translation of ours links its blobs first, and only those the
// plan does not replace are encrypted.
//
// Two sides that each rotated (or converted) since the base are refused
// (errKeysDiffer): there is no key to prefer. So is a plain side whose base
// is sealed: a vault is never converted back.

// rotation is what a merge across a rotation translated.
type rotation struct {
	old    *seal.Key    // the key of the side that did not rotate, and of the base; nil: the plain format
	keyEnt gitlog.Entry // the key file of the rotated side
	theirs bool         // theirs is the side that rotated
	prefix []gitlog.Change
	// fresh: both sides rotated since the base (each removed a member the
	// other still holds), so neither key may seal the merge: it seals under
	// a new generation, every file is encrypted again to the merged
	// recipients, and olds are the keys of the base, ours and theirs.
	fresh bool
	olds  [3]*seal.Key
}

// mergeKeys sets m.key for a merge whose sides hold different keys; fps are
// the fingerprints of the keys ks of the base, ours and theirs ("" and nil for
// the plain format).
func (m *merger) mergeKeys(fps [3]string, ks [3]*seal.Key) error {
	var rotated, other *gitlog.Hash // the root trees of each side
	switch {
	case fps[0] == fps[2] && fps[1] != fps[0]:
		rotated, other = &m.oursT, &m.theirsT
		m.key = ks[1]
	case fps[0] == fps[1] && fps[2] != fps[0]:
		rotated, other = &m.theirsT, &m.oursT
		m.key = ks[2]
	default:
		return m.freshKey(ks)
	}
	if m.key == nil {
		return fmt.Errorf("vault: merge: a side of the plain format whose base is sealed: %w", errKeysDiffer)
	}
	ke, err := m.v.repo.Lookup(*rotated, keyPath)
	if err != nil {
		return fmt.Errorf("vault: merge: %s: %w", keyPath, err)
	}
	m.rot = &rotation{old: ks[0], keyEnt: ke, theirs: rotated == &m.theirsT}
	oursTranslated := other == &m.oursT
	for _, t := range []*gitlog.Hash{&m.baseT, other} {
		if *t, err = m.translate(*t, t == &m.oursT && oursTranslated, ks[0]); err != nil {
			return err
		}
	}
	return nil
}

// freshKey sets m.key for a merge whose two sides each rotated the vault key
// since the base (ks: the keys of the base, ours and theirs): each side's key
// was given to a member the other removed, so the merge seals under a new
// generation, which the merged recipients alone receive, and its keychain
// chains both sides' keys. The base and both sides are translated to it; every
// file is then encrypted again to the merged recipients (see mergeRecipients).
// Sides of the plain format or of format 2, which has no keychain, are refused
// with errKeysDiffer.
func (m *merger) freshKey(ks [3]*seal.Key) error {
	for _, k := range ks {
		if k == nil || !k.Generation() {
			return fmt.Errorf("vault: merge: both sides rotated the vault key, or converted the vault to the sealed format, since they parted: %w", errKeysDiffer)
		}
	}
	content, err := m.v.v.recipientsAt(m.ours)
	if err != nil {
		return fmt.Errorf("vault: merge: %w", err)
	}
	rs, err := m.v.v.parseRecipients(content)
	if err != nil {
		return err
	}
	if m.key, err = newGeneration(rs); err != nil {
		return err
	}
	kf, err := m.v.v.keyFile(m.key, rs)
	if err != nil {
		return err
	}
	ke := gitlog.Entry{Name: "key", Mode: 0o100644 /* a file, as git records it */, Hash: gitlog.BlobHash(kf)}
	m.rot = &rotation{keyEnt: ke, fresh: true, olds: ks}
	for i, t := range []*gitlog.Hash{&m.baseT, &m.oursT, &m.theirsT} {
		if *t, err = m.translate(*t, i == 1, ks[i]); err != nil {
			return err
		}
	}
	return nil
}

// translate writes root's tree with every stored name under memories/ opened
// with its key old and sealed with the merge's, and the rotated side's key
// file, and returns it. When prefix, the changes that make the same tree
// from root, each blob's size header sealed again, go to m.rot.prefix.
func (m *merger) translate(root gitlog.Hash, prefix bool, old *seal.Key) (gitlog.Hash, error) {
	var repl []gitlog.Replacement
	if prefix {
		m.rot.prefix = append(m.rot.prefix, gitlog.Change{Op: gitlog.Delete, Path: memDir})
	}
	var walk func(plain string, newNames []string, h gitlog.Hash) error
	walk = func(plain string, newNames []string, h gitlog.Hash) error {
		es, err := m.v.repo.ReadTree(h)
		if err != nil {
			return fmt.Errorf("vault: merge: %w", err)
		}
		for _, e := range es {
			name := e.Name
			if old != nil {
				if name, err = old.OpenName(plain, e.Name); err != nil {
					return fmt.Errorf("vault: merge: a name not sealed under the vault's old key: %w", ErrBadEntry)
				}
			}
			sealed, err := m.key.SealName(plain, name)
			if err != nil {
				return fmt.Errorf("vault: merge: %w", err)
			}
			at := append(newNames[:len(newNames):len(newNames)], e.Name)
			to := append(newNames[:len(newNames):len(newNames)], sealed)
			ne := e
			repl = append(repl, gitlog.Replacement{Names: at}, gitlog.Replacement{Names: to, Entry: &ne})
			if e.IsDir() {
				if err := walk(plain+"/"+name, to, e.Hash); err != nil {
					return err
				}
				continue
			}
			switch {
			case prefix && (old == nil || m.rot.fresh):
				// Encrypted again by finishRotation, unless the plan
				// replaces it.
				m.rot.prefix = append(m.rot.prefix, gitlog.Change{Op: gitlog.Link, Path: joinNames(to), Hash: e.Hash})
			case prefix:
				data, err := m.reheader(e.Hash)
				if err != nil {
					return err
				}
				m.rot.prefix = append(m.rot.prefix, gitlog.Change{Op: gitlog.Put, Path: joinNames(to), Data: data})
			}
		}
		return nil
	}
	if e, err := m.v.repo.Lookup(root, memDir); err == nil {
		if err := walk(Root, []string{memDir}, e.Hash); err != nil {
			return gitlog.ZeroHash, err
		}
	} else if !errors.Is(err, gitlog.ErrNotFound) {
		return gitlog.ZeroHash, fmt.Errorf("vault: merge: %w", err)
	}
	ke := m.rot.keyEnt
	repl = append(repl, gitlog.Replacement{Names: []string{".memvault", "key"}, Entry: &ke})
	if prefix && !m.rot.fresh { // a fresh key's file is written by settleKeyFile
		m.rot.prefix = append(m.rot.prefix, gitlog.Change{Op: gitlog.Link, Path: keyPath, Hash: ke.Hash})
	}
	h, err := m.v.repo.ReplaceEntries(m.ctx, root, repl)
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: merge: %w", err)
	}
	return h, nil
}

func joinNames(ns []string) string {
	var b bytes.Buffer
	for i, n := range ns {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(n)
	}
	return b.String()
}

// reheader returns memory blob h with its size header, sealed under the old
// key, sealed again under the merge's: the age file stays as it is.
func (m *merger) reheader(h gitlog.Hash) ([]byte, error) {
	blob, err := m.v.repo.ReadBlob(h)
	if err != nil {
		return nil, fmt.Errorf("vault: merge: %w", err)
	}
	out, err := m.key.ResealBlob(m.rot.old, blob)
	for _, old := range m.rot.olds {
		if err == nil || old == nil {
			break
		}
		out, err = m.key.ResealBlob(old, blob)
	}
	switch {
	case errors.Is(err, seal.ErrBadSize), errors.Is(err, seal.ErrNoAgeHeader):
		return nil, fmt.Errorf("vault: merge: a blob with no size header that opens: %w", ErrBadEntry)
	case err != nil:
		return nil, fmt.Errorf("vault: merge: %w", err)
	}
	return out, nil
}

// finishRotation puts the translation of ours first, and turns each link of
// a memory blob whose size header is sealed under the old key into a put of
// the blob with its header sealed again.
func (m *merger) finishRotation() error {
	if m.rot == nil {
		return nil
	}
	replaced := map[string]bool{}
	for _, c := range m.changes {
		if c.Op == gitlog.Put || c.Op == gitlog.Link {
			replaced[c.Path] = true
		}
	}
	prefix := m.rot.prefix[:0:0]
	for _, c := range m.rot.prefix {
		if c.Op == gitlog.Link && isMemory(c.Path) && replaced[c.Path] {
			continue // a plain blob the plan replaces: no need to seal it
		}
		prefix = append(prefix, c)
	}
	m.changes = append(prefix, m.changes...)
	for i, c := range m.changes {
		if c.Op != gitlog.Link || !isMemory(c.Path) {
			continue
		}
		head, _, err := m.v.repo.BlobPrefix(c.Hash, seal.SizeHeaderLen+64<<10)
		if err != nil {
			return fmt.Errorf("vault: merge: %w", err)
		}
		if _, err := m.key.OpenBlobSize(head); err == nil {
			continue
		}
		data, err := m.resealBlob(c.Path, c.Hash)
		if err != nil {
			return err
		}
		m.changes[i] = gitlog.Change{Op: gitlog.Put, Path: c.Path, Data: data}
	}
	return nil
}

// resealBlob returns memory blob h, at tree path tp of the merge's tree, as
// the merge's key holds it: its size header sealed again (reheader), or for
// a blob of the plain format its plaintext padded and encrypted anew to the
// merged recipients.
func (m *merger) resealBlob(tp string, h gitlog.Hash) ([]byte, error) {
	if m.rot.old != nil && !m.rot.fresh {
		return m.reheader(h)
	}
	p, err := m.openTree(tp)
	if err != nil {
		return nil, err
	}
	plain, err := m.v.v.readBlob("/"+p, h)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return m.encrypt(plain)
}

// reencryptedOnly returns s with a side that deleted p and a side whose blob
// differs from the base's only by its encryption seen as they are: across a
// rotation or a conversion every file of the side that made it was encrypted
// anew, which is no modification, so the deletion stands. The plaintexts are
// compared only for a path one side deleted.
func (m *merger) reencryptedOnly(p string, s side) (side, error) {
	if m.rot == nil || !isMemory(p) || s.b.IsZero() || s.o.IsZero() == s.t.IsZero() {
		return s, nil
	}
	kept := &s.o
	if s.o.IsZero() {
		kept = &s.t
	}
	if *kept == s.b {
		return s, nil
	}
	mp, err := m.openTree(p)
	if err != nil {
		return s, err
	}
	before, err := m.v.v.readBlob("/"+mp, s.b)
	if err != nil {
		return s, err
	}
	defer clear(before)
	now, err := m.v.v.readBlob("/"+mp, *kept)
	if err != nil {
		return s, err
	}
	defer clear(now)
	if bytes.Equal(before, now) {
		*kept = s.b
	}
	return s, nil
}
