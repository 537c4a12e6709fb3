package exchange

import (
	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// checkWriters refuses, unless accept, a merge or fast-forward that would
// change the writers this clone holds now, and says in res which keys it adds
// and removes, computed on the resulting set.
func (v *store) checkWriters(base, ours, theirs gitlog.Hash, accept bool, res *SyncResult) error {
	var err error
	res.WritersAdded, res.WritersRemoved, err = lent.CheckWriters(v.v, base, ours, theirs, accept)
	return err
}

// mergeWriters merges the writers file as a set of keys (see vault's mergedWriters).
func (m *merger) mergeWriters(paths map[string]side, handled map[string]bool) error {
	s, ok := paths[keys.WritersPath]
	handled[keys.WritersPath] = true
	switch {
	case !ok, s.o == s.t, s.t == s.b:
		return nil
	case s.o == s.b:
		if s.t.IsZero() {
			m.changes = append(m.changes, gitlog.Change{Op: gitlog.Delete, Path: keys.WritersPath})
		} else {
			m.changes = append(m.changes, gitlog.Change{Op: gitlog.Link, Path: keys.WritersPath, Hash: s.t})
		}
		return nil
	}
	data, err := lent.MergeWriters(m.v.v, m.baseT, m.oursT, m.theirsT)
	if err != nil {
		return err
	}
	m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: keys.WritersPath, Data: data})
	return nil
}
