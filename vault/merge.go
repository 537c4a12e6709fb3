package vault

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"filippo.io/age"
	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

// A merge of diverged histories is done on plaintext, path by path: a path that
// one side changed takes that side; a path both changed is decrypted three times
// (base, ours, theirs), merged by lines and encrypted again, keeping both versions
// between conflict markers where the changes overlap. Nothing decrypted is written
// anywhere but into the new ciphertext.
//
// This file plans the merge path by path; merge_renames.go lets a modification
// follow a file the other side moved, and merge_dirs.go settles a file and a
// directory that the two sides made at one name.

// merger holds one merge's inputs while it is planned.
type merger struct {
	v                        *store
	ctx                      context.Context
	base, ours, theirs       gitlog.Hash // commits
	baseT, oursT, theirsT    gitlog.Hash // their root trees
	labels                   textdiff.Labels
	changes                  []gitlog.Change
	conflicts                []string // memory paths
	movedAside               []string // the conflicts that are files moved aside
	recipients               []age.Recipient
	oursRecips, theirsRecips bool // whether each side's files are already encrypted to recipients
	renames                  map[gitlog.Hash][][2]string
	key                      *seal.Key // the vault key of the sealed format; nil for the plain one
	rot                      *rotation // a merge across a rotation of the key (merge_rotated.go)
}

// side is one path's blob in the base and on each side; ZeroHash where absent.
type side struct{ b, o, t gitlog.Hash }

// planMerge returns the change set that turns ours's tree into the merge of ours
// and theirs from base, the memory paths named as conflicts, and those of them
// that are files moved aside from a directory. Theirs's tree is taken to be
// theirsT unless that is ZeroHash (a sync that leaves refused entries out:
// see sync_skip.go).
func (v *store) planMerge(ctx context.Context, base, ours, theirs, theirsT gitlog.Hash, labels textdiff.Labels) (changes []gitlog.Change, conflicts, movedAside []string, err error) {
	m := &merger{v: v, ctx: ctx, base: base, ours: ours, theirs: theirs, labels: labels, renames: map[gitlog.Hash][][2]string{}}
	for _, p := range []struct {
		c gitlog.Hash
		t *gitlog.Hash
	}{{base, &m.baseT}, {ours, &m.oursT}, {theirs, &m.theirsT}} {
		if *p.t, err = v.repo.RootTree(p.c); err != nil {
			return nil, nil, nil, fmt.Errorf("vault: merge: %w", err)
		}
	}
	if !theirsT.IsZero() {
		m.theirsT = theirsT
	}
	if err := m.mergeKey(); err != nil {
		return nil, nil, nil, err
	}
	paths, err := m.changedPaths()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := m.mergeRecipients(paths); err != nil {
		return nil, nil, nil, err
	}
	handled := map[string]bool{recipientsPath: true}
	if err := m.settleKeyFile(handled); err != nil {
		return nil, nil, nil, err
	}
	if err := m.settleKeychain(handled); err != nil {
		return nil, nil, nil, err
	}
	if err := m.mergeWriters(paths, handled); err != nil {
		return nil, nil, nil, err
	}
	if err := m.followRenames(paths, handled); err != nil {
		return nil, nil, nil, err
	}
	keys := sortedKeys(paths)
	for _, p := range keys {
		if !handled[p] {
			if err := m.mergePath(p, paths[p]); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if err := m.reencryptOurs(); err != nil {
		return nil, nil, nil, err
	}
	if err := m.separateFilesAndDirs(); err != nil {
		return nil, nil, nil, err
	}
	// Deletions first, so a path freed by one change can be taken by another.
	sort.SliceStable(m.changes, func(i, j int) bool {
		return m.changes[i].Op == gitlog.Delete && m.changes[j].Op != gitlog.Delete
	})
	if err := m.finishRotation(); err != nil {
		return nil, nil, nil, err
	}
	if m.conflicts, err = m.memoryPaths(m.conflicts); err != nil {
		return nil, nil, nil, err
	}
	if m.movedAside, err = m.memoryPaths(m.movedAside); err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(m.conflicts)
	sort.Strings(m.movedAside)
	return m.changes, m.conflicts, m.movedAside, nil
}

func sortedKeys(m map[string]side) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// changedPaths maps every file either side changed since the base to its blobs.
func (m *merger) changedPaths() (map[string]side, error) {
	paths := map[string]side{}
	do, err := m.v.repo.DiffTrees(m.baseT, m.oursT, "")
	if err != nil {
		return nil, fmt.Errorf("vault: merge: %w", err)
	}
	dt, err := m.v.repo.DiffTrees(m.baseT, m.theirsT, "")
	if err != nil {
		return nil, fmt.Errorf("vault: merge: %w", err)
	}
	for _, c := range do {
		paths[c.Path] = side{b: c.From, o: c.To, t: c.From}
	}
	for _, c := range dt {
		s, ok := paths[c.Path]
		if !ok {
			s = side{b: c.From, o: c.From}
		}
		s.t = c.To
		paths[c.Path] = s
	}
	return paths, nil
}

// mergeRecipients merges the recipients file as a set of keys (see
// mergedRecipients) and loads the recipients the merged files are encrypted
// to. A merged set age cannot encrypt to (post-quantum keys mixed with
// classical ones, or none) is an error wrapping ErrRecipients.
func (m *merger) mergeRecipients(paths map[string]side) error {
	s, ok := paths[recipientsPath]
	if !ok {
		e, err := m.v.repo.Lookup(m.oursT, recipientsPath)
		if err != nil {
			return fmt.Errorf("vault: merge: %s: %w", recipientsPath, err)
		}
		s = side{e.Hash, e.Hash, e.Hash}
	}
	var fs [3]*keys.RecipientsFile
	for i, h := range []gitlog.Hash{s.b, s.o, s.t} {
		if h.IsZero() {
			return fmt.Errorf("vault: merge: a side has no %s: %w", recipientsPath, ErrRecipients)
		}
		content, err := m.v.repo.ReadBlob(h)
		if err != nil {
			return fmt.Errorf("vault: merge: %s: %w", recipientsPath, err)
		}
		if fs[i], err = keys.ParseRecipientsFile(content); err != nil {
			return err
		}
	}
	merged := fs[1]
	switch {
	case s.o == s.t || s.t == s.b:
	case s.o == s.b:
		merged = fs[2]
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Link, Path: recipientsPath, Hash: s.t})
	default:
		merged = mergedRecipients(fs[0], fs[1], fs[2])
		if err := merged.Check(); err != nil {
			return err
		}
		if merged.Fingerprint() != fs[1].Fingerprint() {
			m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: recipientsPath, Data: merged.Bytes()})
		}
	}
	var err error
	if m.recipients, err = m.v.v.parseRecipients(merged.Bytes()); err != nil {
		return err
	}
	m.oursRecips = merged.Fingerprint() == fs[1].Fingerprint()
	m.theirsRecips = merged.Fingerprint() == fs[2].Fingerprint()
	if m.rot != nil && m.rot.fresh {
		// A new generation: no file of either side is encrypted to it.
		m.oursRecips, m.theirsRecips = false, false
	}
	return nil
}

// mergePath resolves one path both or either side changed.
func (m *merger) mergePath(p string, s side) error {
	s, err := m.reencryptedOnly(p, s)
	if err != nil {
		return err
	}
	switch {
	case s.o == s.t, s.t == s.b:
		return nil // ours already holds the result
	case s.o == s.b && s.t.IsZero():
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Delete, Path: p})
		return nil
	case s.o == s.b, s.o.IsZero():
		// Theirs alone changed it, or ours deleted what theirs modified: the
		// modified file stays.
		return m.take(p, s.t)
	case s.t.IsZero():
		return nil // theirs deleted what ours modified: ours stays
	}
	// A side that deleted or moved p since the base and then put another file
	// there did not modify the base's file: the two files are merged as two
	// new ones, so that neither loses what the other side replaced.
	for _, head := range []gitlog.Hash{m.ours, m.theirs} {
		q, err := m.follow(head, p)
		if err != nil {
			return err
		}
		if q != p {
			s.b = gitlog.ZeroHash
			break
		}
	}
	return m.put(p, s)
}

// take puts theirs's blob h at p, encrypted again if theirs's files are not
// encrypted to the merged recipients.
func (m *merger) take(p string, h gitlog.Hash) error {
	if m.theirsRecips || !isMemory(p) {
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Link, Path: p, Hash: h})
		return nil
	}
	plain, err := m.v.v.readBlob(p, h)
	if err != nil {
		return err
	}
	ct, err := m.encrypt(plain)
	if err != nil {
		return err
	}
	m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: p, Data: ct})
	return nil
}

// put merges the three versions of p and stages the result.
func (m *merger) put(p string, s side) error {
	merged, n, err := m.merge3(p, s)
	if err != nil {
		return err
	}
	if n > 0 {
		m.conflicts = append(m.conflicts, "/"+p)
	}
	if isMemory(p) {
		if merged, err = m.encrypt(merged); err != nil {
			return err
		}
	}
	m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: p, Data: merged})
	return nil
}

// merge3 merges the plaintexts of p's three blobs; an absent one reads as empty.
func (m *merger) merge3(p string, s side) ([]byte, int, error) {
	var texts [3][]byte
	for i, h := range []gitlog.Hash{s.b, s.o, s.t} {
		if h.IsZero() {
			continue
		}
		var err error
		if isMemory(p) {
			texts[i], err = m.v.v.readBlob("/"+p, h)
		} else {
			texts[i], err = m.v.repo.ReadBlob(h)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("vault: merge %s: %w", p, err)
		}
	}
	merged, n := textdiff.Merge(texts[0], texts[1], texts[2], m.labels)
	return merged, n, nil
}

func isMemory(p string) bool { return strings.HasPrefix(p, memDir+"/") }

// reencryptOurs encrypts again, to the merged recipients, the memory files ours
// changed and the merge leaves alone, when ours's files were encrypted to others.
func (m *merger) reencryptOurs() error {
	if m.oursRecips {
		return nil
	}
	touched := map[string]bool{}
	for _, c := range m.changes {
		touched[c.Path] = true
	}
	d, err := m.v.repo.DiffTrees(m.theirsT, m.oursT, memDir)
	if err != nil {
		return fmt.Errorf("vault: merge: %w", err)
	}
	for _, c := range d {
		if c.To.IsZero() || touched[c.Path] {
			continue
		}
		plain, err := m.v.v.readBlob("/"+c.Path, c.To)
		if err != nil {
			return err
		}
		ct, err := m.encrypt(plain)
		if err != nil {
			return err
		}
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: c.Path, Data: ct})
	}
	return nil
}

var errNoBase = errors.New("the histories share no commit")
