package gitlog

import (
	"errors"
	"strings"
)

// TreeChange is one file that differs between two trees.
type TreeChange struct {
	Path     string // slash-separated, from the root tree
	From, To Hash   // the blobs before and after; ZeroHash where there is no file
}

// DiffTrees returns the files that differ between trees a and b (ZeroHash reads
// as the empty tree) at tree path p or under it ("" for everything), in git order.
// A directory added or deleted as a whole counts as each of its files. Only
// subtrees that differ are read.
func (r *Repo) DiffTrees(a, b Hash, p string) ([]TreeChange, error) {
	ea, err := r.entryAt(a, p)
	if err != nil {
		return nil, err
	}
	eb, err := r.entryAt(b, p)
	if err != nil {
		return nil, err
	}
	var out []TreeChange
	return out, r.diffEntries(p, ea, eb, &out)
}

// entryAt returns the entry at p in tree root, or nil when there is none.
func (r *Repo) entryAt(root Hash, p string) (*Entry, error) {
	if root.IsZero() {
		return nil, nil
	}
	e, err := r.Lookup(root, p)
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotDir) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}

func (r *Repo) diffEntries(p string, ea, eb *Entry, out *[]TreeChange) error {
	switch {
	case ea != nil && eb != nil && ea.Hash == eb.Hash && ea.Mode == eb.Mode:
		return nil
	case ea != nil && eb != nil && ea.IsDir() && eb.IsDir():
		return r.diffLevel(ea.Hash, eb.Hash, func(name string, x, y *Entry) error {
			return r.diffEntries(joinPath(p, name), x, y, out)
		})
	case ea != nil && eb != nil && !ea.IsDir() && !eb.IsDir():
		*out = append(*out, TreeChange{Path: p, From: ea.Hash, To: eb.Hash})
		return nil
	}
	// One side missing, or a file on one side and a directory on the other.
	if ea != nil {
		if err := r.files(p, *ea, func(q string, h Hash) { *out = append(*out, TreeChange{Path: q, From: h}) }); err != nil {
			return err
		}
	}
	if eb != nil {
		return r.files(p, *eb, func(q string, h Hash) { *out = append(*out, TreeChange{Path: q, To: h}) })
	}
	return nil
}

// files calls fn for each file at or under entry e, which is at path p.
func (r *Repo) files(p string, e Entry, fn func(p string, blob Hash)) error {
	if !e.IsDir() {
		fn(p, e.Hash)
		return nil
	}
	es, err := r.ReadTree(e.Hash)
	if err != nil {
		return err
	}
	for _, c := range es {
		if err := r.files(joinPath(p, c.Name), c, fn); err != nil {
			return err
		}
	}
	return nil
}

// diffLevel calls fn for each name whose entry differs between trees a and b
// (ZeroHash reads as empty), in git order; ea or eb is nil where the name is
// missing. A file and a directory of the same name are two different names.
func (r *Repo) diffLevel(a, b Hash, fn func(name string, ea, eb *Entry) error) error {
	if a == b {
		return nil
	}
	as, err := r.ReadTree(a)
	if err != nil {
		return err
	}
	bs, err := r.ReadTree(b)
	if err != nil {
		return err
	}
	for i, j := 0, 0; i < len(as) || j < len(bs); {
		cmp := 0
		switch {
		case j == len(bs):
			cmp = -1
		case i == len(as):
			cmp = 1
		default:
			cmp = compareEntries(as[i], bs[j])
		}
		switch {
		case cmp < 0:
			err = fn(as[i].Name, &as[i], nil)
			i++
		case cmp > 0:
			err = fn(bs[j].Name, nil, &bs[j])
			j++
		default:
			if as[i].Hash != bs[j].Hash || as[i].Mode != bs[j].Mode {
				err = fn(as[i].Name, &as[i], &bs[j])
			}
			i, j = i+1, j+1
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compareEntries orders entries as git does: a tree's name as if it ended in "/".
func compareEntries(a, b Entry) int {
	n := min(len(a.Name), len(b.Name))
	if c := strings.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	ca, cb := nameByte(a, n), nameByte(b, n)
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return 0
}

// nameByte is the byte at i of e's name in git's order, 0 past its end.
func nameByte(e Entry, i int) int {
	switch {
	case i < len(e.Name):
		return int(e.Name[i])
	case i == len(e.Name) && e.IsDir():
		return '/'
	}
	return 0
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
