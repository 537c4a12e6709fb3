package gitlog

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Replacement puts Entry (or nothing, when nil) in place of the entry a tree
// reaches through Names, one name a level. Names are taken as they are, so an
// entry whose name no path can spell (a slash, "..", a newline in it) can be
// named too.
type Replacement struct {
	Names []string
	Entry *Entry
}

// ReplaceEntries writes the tree that repl makes of tree root, and the trees
// on the way, as one pack, without moving any branch, and returns it. Only the
// trees on the replaced entries' way are read. A directory left empty goes; a
// replacement below a name that is no directory is ignored, as is the removal
// of an entry that is not there.
func (r *Repo) ReplaceEntries(ctx context.Context, root Hash, repl []Replacement) (Hash, error) {
	var objs []rawObject
	h, ok, err := r.replaceIn(root, repl, &objs)
	if err != nil {
		return ZeroHash, err
	}
	if !ok {
		empty := newObject(plumbing.TreeObject, nil)
		objs, h = append(objs, empty), empty.Hash
	}
	if err := r.packObjects(ctx, objs); err != nil {
		return ZeroHash, err
	}
	return h, nil
}

func (r *Repo) replaceIn(tree Hash, repl []Replacement, objs *[]rawObject) (Hash, bool, error) {
	es, err := r.ReadTree(tree)
	if err != nil {
		return ZeroHash, false, fmt.Errorf("gitlog: replace in %s: %w", tree, err)
	}
	m := make(map[string]Entry, len(es))
	for _, e := range es {
		m[e.Name] = e
	}
	below := map[string][]Replacement{}
	for _, rp := range repl {
		switch {
		case len(rp.Names) == 0:
		case len(rp.Names) == 1 && rp.Entry == nil:
			delete(m, rp.Names[0])
		case len(rp.Names) == 1:
			e := *rp.Entry
			e.Name = rp.Names[0]
			m[e.Name] = e
		default:
			below[rp.Names[0]] = append(below[rp.Names[0]], Replacement{Names: rp.Names[1:], Entry: rp.Entry})
		}
	}
	for name, sub := range below {
		e, found := m[name]
		if !found || !e.IsDir() {
			continue
		}
		h, ok, err := r.replaceIn(e.Hash, sub, objs)
		if err != nil {
			return ZeroHash, false, err
		}
		if !ok {
			delete(m, name)
			continue
		}
		e.Hash = h
		m[name] = e
	}
	if len(m) == 0 {
		return ZeroHash, false, nil
	}
	for name := range m {
		if strings.IndexByte(name, 0) >= 0 {
			return ZeroHash, false, fmt.Errorf("gitlog: replace in %s: a name with NUL", tree)
		}
	}
	data, _ := encodeTree(m)
	o := newObject(plumbing.TreeObject, data)
	*objs = append(*objs, o)
	return o.Hash, true, nil
}
