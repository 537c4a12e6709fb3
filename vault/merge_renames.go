package vault

// Rename against modify: when one side moved a file the other side modified,
// the modification follows the file to its new path. Where a path went is read
// from the rename and delete commits of each side since the merge base (their
// Memory-Command trailers), in the order they were made.

import (
	"fmt"
	"strings"

	"github.com/memvault/memvault/gitlog"
)

// followRenames handles rename against modify: when one side moved a file the
// other side modified, the modification follows the file to its new path.
func (m *merger) followRenames(paths map[string]side, handled map[string]bool) error {
	for _, p := range sortedKeys(paths) {
		s := paths[p]
		if handled[p] || s.b.IsZero() {
			continue
		}
		var mover, other, mtree gitlog.Hash
		switch {
		case s.t.IsZero() && !s.o.IsZero() && s.o != s.b:
			mover, other, mtree = m.theirs, m.ours, m.theirsT
		case s.o.IsZero() && !s.t.IsZero() && s.t != s.b:
			mover, other, mtree = m.ours, m.theirs, m.oursT
		default:
			continue
		}
		q, err := m.follow(mover, p)
		if err != nil {
			return err
		}
		if q == p || q == "" {
			continue // not moved, or moved and then deleted: delete vs modify
		}
		// The other side's file at p is a modification of the base's only if
		// that side never moved or deleted p; if it did, it is another file,
		// and stays at p while the moved one stays where it went.
		if back, err := m.follow(other, p); err != nil {
			return err
		} else if back != p {
			continue
		}
		e, err := m.v.repo.Lookup(mtree, q)
		if err != nil || e.IsDir() {
			continue // moved on, then deleted or replaced: delete vs modify
		}
		// The other side made a file of its own at q, or q already takes
		// another file's changes: merging the modification into q would drop
		// that one. Delete vs modify instead: the modified file stays at p.
		if t := paths[q]; handled[q] || mover == m.theirs && t.o != t.b || mover == m.ours && t.t != t.b {
			continue
		}
		ns := side{b: s.b, o: s.o, t: e.Hash}
		if mover == m.ours {
			ns = side{b: s.b, o: e.Hash, t: s.t}
		} else {
			m.changes = append(m.changes, gitlog.Change{Op: gitlog.Delete, Path: p})
		}
		handled[p], handled[q] = true, true
		if err := m.put(q, ns); err != nil {
			return err
		}
	}
	return nil
}

// follow returns where tree path p went through the rename commits on the side
// whose head is head since the merge base, or "" if a delete commit removed it
// on the way.
//
// In the sealed format the renames are plaintext tree paths (a folder's move
// re-seals every name below it, so stored names cannot be followed by their
// prefix): p is opened first, and where it went sealed again.
func (m *merger) follow(head gitlog.Hash, stored string) (string, error) {
	rs, ok := m.renames[head]
	if !ok {
		var err error
		if rs, err = m.sideRenames(head); err != nil {
			return "", err
		}
		m.renames[head] = rs
	}
	p, err := m.openTree(stored)
	if err != nil {
		return "", err
	}
	p = followIn(rs, p)
	if p == "" {
		return "", nil
	}
	q, err := m.sealTree(p)
	if err != nil {
		return stored, nil // moved to a name the format cannot store: not followed
	}
	return q, nil
}

// followIn returns where tree path p went through the renames and deletes
// rs, or "" when one removed it.
func followIn(rs [][2]string, p string) string {
	for _, r := range rs {
		switch {
		case r[1] == "": // a delete
			if p == r[0] || strings.HasPrefix(p, r[0]+"/") {
				return ""
			}
		case p == r[0]:
			p = r[1]
		case strings.HasPrefix(p, r[0]+"/"):
			p = r[1] + p[len(r[0]):]
		}
	}
	return p
}

// sideRenames lists, oldest first, the renames (tree paths, from and to, in
// plaintext) and the deletes (the path and "") of the commits reachable from head and not from the
// merge base.
func (m *merger) sideRenames(head gitlog.Hash) ([][2]string, error) {
	cs, err := m.sideCommits(head)
	if err != nil {
		return nil, err
	}
	var rs [][2]string
	for _, c := range cs {
		msg, err := m.v.v.openedMessage(c)
		if err != nil {
			return nil, err
		}
		tr := trailerValues(msg, trCommand, trPath, trNewPath)
		switch tr[0] {
		case "rename":
			from, err1 := treePath(tr[1])
			to, err2 := treePath(tr[2])
			if err1 == nil && err2 == nil {
				rs = append(rs, [2]string{from, to})
			}
		case "delete":
			if p, err := treePath(tr[1]); err == nil {
				rs = append(rs, [2]string{p, ""})
			}
		}
	}
	return rs, nil
}

// sideCommits returns the commits reachable from head and not from the merge
// base, each after its parents: commit times cannot give that order, for many
// commits share a second, and a chain of renames (a to b, then c to a) must be
// followed in the order it was made. A side that is a chain of commits on the
// base, the usual case, is read alone; a side with a merge is walked as
// sideGraph (merge_side.go) says.
func (m *merger) sideCommits(head gitlog.Hash) ([]*gitlog.Commit, error) {
	var chain []*gitlog.Commit
	for h := head; h != m.base; {
		if err := m.ctx.Err(); err != nil {
			return nil, err
		}
		c, err := m.v.repo.ReadCommit(h)
		if err != nil {
			return nil, fmt.Errorf("vault: merge: %w", err)
		}
		if len(c.ParentHashes) != 1 {
			return m.sideGraph(head)
		}
		chain = append(chain, c)
		h = c.ParentHashes[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}
