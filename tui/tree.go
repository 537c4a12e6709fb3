package tui

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

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
	*common
	frame
	snap *vault.Snapshot // the head the tree lists

	root   *node
	rows   []*node
	cursor int
	offset int

	filter   string
	matches  *node  // the filtered tree, built from every file path
	all      []file // every file at commit allAt, once walked for a filter
	allAt    string
	walkWant string // the commit a walk was asked for
	err      error  // the last listing failed; the next key lists again

	// conflicted are the files a merge left to settle, and the directories
	// above them, as the status conflictsOf says.
	conflicted  map[string]bool
	conflictsOf *vault.Status
}

// setConflicts marks the files in conflict, and the directories they are in.
func (t *treeModel) setConflicts(st *vault.Status, list []conflict) {
	t.conflictsOf = st
	t.conflicted = make(map[string]bool, len(list))
	for _, c := range list {
		for p := c.path; p != vault.Root && p != "/" && p != "."; p = path.Dir(p) {
			t.conflicted[p] = true
		}
	}
}

// file is a memory file found by a walk of the whole tree.
type file struct {
	path string
	size int64
}

func newTree(c *common) treeModel {
	root := &node{path: vault.Root, name: vault.Root, dir: true, open: true}
	t := treeModel{common: c, root: root}
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

// Update implements component: the keys that move in the tree and fold it, a
// click on a row, and the listings it asked for.
func (t *treeModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := &t.keys
		if d, ok := navDelta(k, msg, t.height); ok {
			t.move(d)
			return nil
		}
		switch {
		case key.Matches(msg, k.Fold):
			return t.fold(false)
		case key.Matches(msg, k.Unfold):
			return t.fold(true)
		case key.Matches(msg, k.Open):
			if n := t.selected(); n != nil && n.dir {
				return t.fold(!n.open)
			}
		}
	case clickMsg:
		if msg.row >= 0 && t.offset+msg.row < len(t.rows) {
			t.cursor = t.offset + msg.row
		}
	case scrollMsg:
		t.move(msg.delta)
	case dirsMsg:
		if t.snap == nil || msg.commit != t.snap.Commit() {
			return nil
		}
		t.err = msg.err
		if msg.err != nil {
			t.setStatus(fmt.Sprintf("list the tree: %v (any key tries again)", msg.err), true)
			return nil
		}
		t.setDirs(msg.dirs)
	case walkMsg:
		if t.snap == nil || msg.commit != t.walkWant {
			return nil
		}
		if msg.err != nil {
			t.setStatus(fmt.Sprintf("list every file: %v", msg.err), true)
			return nil
		}
		t.setAll(msg.commit, msg.files)
	}
	return nil
}

// fold closes (or opens) the selected directory; folding a file or a closed
// directory moves to its parent.
func (t *treeModel) fold(open bool) tea.Cmd {
	n := t.selected()
	if n == nil {
		return nil
	}
	if !n.dir || (!open && !n.open) {
		if !open {
			for i := t.cursor - 1; i >= 0; i-- {
				if t.rows[i].depth < n.depth {
					t.cursor = i
					return nil
				}
			}
		}
		return nil
	}
	if n.open == open {
		return nil
	}
	n.open = open
	t.flatten()
	if open && !n.listed && t.snap != nil {
		return dirsCmd(t.ctx, t.snap, []string{n.path})
	}
	return nil
}

// Title implements component.
func (t *treeModel) Title() string {
	s := "Memory"
	if t.filter != "" {
		s += " · /" + sanitize(t.filter)
	}
	return s
}

// View implements component: the visible rows of the tree.
func (t *treeModel) View() []string {
	w, h := t.width, t.height
	out := make([]string, 0, h)
	for i := t.offset; i < len(t.rows) && len(out) < h; i++ {
		n := t.rows[i]
		var b strings.Builder
		b.WriteString(strings.Repeat("  ", n.depth))
		name := sanitize(n.name)
		switch {
		case n.dir && n.open:
			b.WriteString("▾ " + t.highlight(name, t.st.Dir))
		case n.dir:
			b.WriteString("▸ " + t.highlight(name, t.st.Dir) + t.st.Dir.Render("/"))
		default:
			b.WriteString("  " + t.highlight(name, t.st.File))
		}
		size := t.st.Size.Render(humanSize(n.size))
		switch {
		case t.conflicted[n.path]:
			size = t.st.StatusError.Render("conflict") // C lists them
		case n.bad:
			size = t.st.Size.Render("unreadable")
		case n.dir:
			size = ""
		}
		out = append(out, listRow(&t.st, b.String(), size, w, i == t.cursor, t.focused))
	}
	if len(t.rows) == 0 {
		out = append(out, pad(t.st.Faint.Render("nothing matches"), w))
	}
	return out
}

// highlight draws name in st, and the part the tree filter matched in Match.
func (t *treeModel) highlight(name string, st lipgloss.Style) string {
	lname, q := strings.ToLower(name), strings.ToLower(t.filter)
	i := strings.Index(lname, q)
	if q == "" || i < 0 || len(lname) != len(name) { // offsets in lname must hold in name
		return st.Render(name)
	}
	j := i + len(q)
	return st.Render(name[:i]) + t.st.Match.Render(name[i:j]) + st.Render(name[j:])
}

// dirsCmd lists the directories dirs of snap.
func dirsCmd(ctx context.Context, snap *vault.Snapshot, dirs []string) tea.Cmd {
	return func() tea.Msg {
		out := make(map[string][]vault.Entry, len(dirs))
		for _, d := range dirs {
			es, err := snap.List(ctx, d)
			if errors.Is(err, vault.ErrNotExist) || errors.Is(err, vault.ErrNotDir) {
				continue // gone since: its parent's listing drops it
			}
			if errors.Is(err, vault.ErrBadEntry) && d != vault.Root {
				continue // unreadable (vault.EntryError): the rest still shows
			}
			if err != nil {
				return dirsMsg{commit: snap.Commit(), err: err}
			}
			out[d] = es
		}
		return dirsMsg{commit: snap.Commit(), dirs: out}
	}
}

// walkCmd lists every file of snap.
func walkCmd(ctx context.Context, snap *vault.Snapshot) tea.Cmd {
	return func() tea.Msg {
		var files []file
		var walk func(dir string) error
		walk = func(dir string) error {
			es, err := snap.List(ctx, dir)
			if err != nil {
				return err
			}
			for _, e := range es {
				p := dir + "/" + e.Name
				if e.Dir {
					if err := walk(p); err != nil && !errors.Is(err, vault.ErrBadEntry) {
						return err
					}
					continue
				}
				files = append(files, file{path: p, size: e.Size})
			}
			return nil
		}
		err := walk(vault.Root)
		return walkMsg{commit: snap.Commit(), files: files, err: err}
	}
}
