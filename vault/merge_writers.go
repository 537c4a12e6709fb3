package vault

import (
	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// checkWriters refuses, unless accept, a merge or fast-forward that would
// change the writers this clone holds now, and says in res which keys it adds
// and removes, computed on the resulting set.
func (v *store) checkWriters(base, ours, theirs gitlog.Hash, accept bool, res *SyncResult) error {
	var err error
	res.WritersAdded, res.WritersRemoved, err = v.v.checkWriters(base, ours, theirs, accept)
	return err
}

// mergeWriters merges the writers file and the file of removed writers as
// sets of keys (see vault's mergedMembers).
func (m *merger) mergeWriters(paths map[string]side, handled map[string]bool) error {
	w, wok := paths[keys.WritersPath]
	r, rok := paths[keys.RemovedPath]
	handled[keys.WritersPath], handled[keys.RemovedPath] = true, true
	if (!wok || w.o == w.t || w.t == w.b) && (!rok || r.o == r.t || r.t == r.b) {
		return nil // theirs changed neither, or as ours did
	}
	writers, removed, err := m.v.v.mergeWriters(m.baseT, m.oursT, m.theirsT)
	if err != nil {
		return err
	}
	m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: keys.WritersPath, Data: writers})
	switch {
	case removed != nil:
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: keys.RemovedPath, Data: removed})
	case rok && !r.o.IsZero():
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Delete, Path: keys.RemovedPath})
	}
	return nil
}
