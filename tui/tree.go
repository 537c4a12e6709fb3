package tui

import (
	"path"
	"sort"
	"strings"

	"github.com/memvault/memvault/vault"
)

// node is a file or directory of the memory tree.
type node struct {
	path   string
	name   string
	dir    bool
	size   int64
	bad    bool // the vault does not read it (vault.Entry.Err)
	depth  int
	open   bool
	listed bool // kids hold the directory's entries
	kids   []*node
}

// treeModel is the memory tree pane: the directories the user opened, listed
// lazily, flattened into rows of which only the visible ones are drawn.
type treeModel struct {
	root   *node
	rows   []*node
	cursor int
	offset int

	filter   string
	matches  *node  // the filtered tree, built from every file path
	all      []file // every file at commit allAt, once walked for a filter
	allAt    string
	walkWant string // the commit a walk was asked for
}

// file is a memory file found by a walk of the whole tree.
type file struct {
	path string
	size int64
}

func newTree() treeModel {
	root := &node{path: vault.Root, name: vault.Root, dir: true, open: true}
	t := treeModel{root: root}
	t.flatten()
	return t
}

// selected returns the node under the cursor, or nil.
func (t *treeModel) selected() *node {
	if t.cursor < 0 || t.cursor >= len(t.rows) {
		return nil
	}
	return t.rows[t.cursor]
}

// openDirs lists the directories whose entries are shown, root first.
func (t *treeModel) openDirs() []string {
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		if !n.dir || !n.open {
			return
		}
		out = append(out, n.path)
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(t.root)
	return out
}

// setDirs puts freshly listed entries in place, keeping what is open. A
// directory missing from dirs keeps its old entries; one no longer listed by its
// parent disappears with it.
func (t *treeModel) setDirs(dirs map[string][]vault.Entry) {
	var walk func(n *node)
	walk = func(n *node) {
		if es, ok := dirs[n.path]; ok {
			old := make(map[string]*node, len(n.kids))
			for _, k := range n.kids {
				old[k.name] = k
			}
			kids := make([]*node, 0, len(es))
			for _, e := range es {
				k := old[e.Name]
				if k == nil || k.dir != e.Dir {
					k = &node{path: n.path + "/" + e.Name, name: e.Name, dir: e.Dir, depth: n.depth + 1}
				}
				k.size, k.bad = e.Size, e.Err != nil
				kids = append(kids, k)
			}
			n.kids, n.listed = kids, true
		}
		for _, k := range n.kids {
			if k.dir && k.open {
				walk(k)
			}
		}
	}
	walk(t.root)
	t.flatten()
}

// flatten recomputes the rows, keeping the cursor on the same path when it is
// still there.
func (t *treeModel) flatten() {
	keep := ""
	if n := t.selected(); n != nil {
		keep = n.path
	}
	t.rows = t.rows[:0]
	var walk func(n *node)
	walk = func(n *node) {
		t.rows = append(t.rows, n)
		if n.dir && n.open {
			for _, k := range n.kids {
				walk(k)
			}
		}
	}
	if t.filter != "" && t.matches != nil {
		walk(t.matches)
	} else {
		walk(t.root)
	}
	t.cursor = min(t.cursor, len(t.rows)-1)
	if keep != "" {
		for i, n := range t.rows {
			if n.path == keep {
				t.cursor = i
				break
			}
		}
	}
}

// setFilter filters the tree to files whose path below /memories contains q,
// ignoring case. It needs every file path; it reports whether they are missing
// for head, so the caller walks the tree.
func (t *treeModel) setFilter(q, head string) (needWalk bool) {
	t.filter = q
	if q == "" {
		t.matches = nil
		t.flatten()
		return false
	}
	if t.allAt != head {
		return true
	}
	t.matches = buildMatches(t.all, q)
	t.cursor = 0
	t.flatten()
	return false
}

// setAll takes the result of a walk and applies the filter to it.
func (t *treeModel) setAll(commit string, files []file) {
	t.all, t.allAt = files, commit
	if t.filter != "" {
		t.matches = buildMatches(files, t.filter)
		t.flatten()
	}
}

// buildMatches makes a tree, every directory open, of the files matching q.
func buildMatches(files []file, q string) *node {
	q = strings.ToLower(q)
	root := &node{path: vault.Root, name: vault.Root, dir: true, open: true, listed: true}
	dirs := map[string]*node{vault.Root: root}
	var dirOf func(p string) *node
	dirOf = func(p string) *node {
		if d := dirs[p]; d != nil {
			return d
		}
		parent := dirOf(path.Dir(p))
		d := &node{path: p, name: path.Base(p), dir: true, open: true, listed: true, depth: parent.depth + 1}
		parent.kids = append(parent.kids, d)
		dirs[p] = d
		return d
	}
	for _, f := range files {
		rel := strings.TrimPrefix(f.path, vault.Root+"/")
		if !strings.Contains(strings.ToLower(rel), q) {
			continue
		}
		d := dirOf(path.Dir(f.path))
		d.kids = append(d.kids, &node{path: f.path, name: path.Base(f.path), size: f.size, depth: d.depth + 1})
	}
	var sortKids func(n *node)
	sortKids = func(n *node) {
		sort.Slice(n.kids, func(i, j int) bool { return n.kids[i].name < n.kids[j].name })
		for _, k := range n.kids {
			sortKids(k)
		}
	}
	sortKids(root)
	return root
}

// move moves the cursor by delta rows, within bounds.
func (t *treeModel) move(delta int) {
	t.cursor = clamp(t.cursor+delta, 0, len(t.rows)-1)
}

// counts returns how many files and directories a listed directory holds
// directly.
func (n *node) counts() (files, dirs int) {
	for _, k := range n.kids {
		if k.dir {
			dirs++
		} else {
			files++
		}
	}
	return files, dirs
}

func clamp(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}
