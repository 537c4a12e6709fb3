package vault

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/gitlog"
)

// A file and a directory of one name cannot both be in a tree, yet each side of
// a merge can make one of them: one side writes /memories/x, renames a file to
// it, or replaces a directory x by a file, while the other writes
// /memories/x/y.md. The merge keeps both. The directory stays where it is, and
// the file moves aside, next to it, to x.conflict-ours or x.conflict-theirs after
// the side whose tree held the file ("ours" is the vault that runs the merge, as
// in the conflict markers); when that name is taken the first free one of
// x.conflict-ours-2, -3, … is used, and a name too long for a path segment is
// cut short before the suffix. The moved file is named as a conflict, in
// SyncResult.Conflicts and the merge commit's trailers, so the user sees it.

// separateFilesAndDirs finds the files the planned changes would leave where a
// directory also is, and moves each aside (see above). A directory of ours that
// a new file replaces, once all its files go, goes as a whole first.
func (m *merger) separateFilesAndDirs() error {
	l := newLayout(m)
	clash, emptied, err := l.clashes()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(clash))
	for p := range clash {
		paths = append(paths, p)
	}
	sort.Strings(paths) // a file above another first: once it moves, that one's parent is free
	for _, p := range paths {
		if err := l.moveAside(p); err != nil {
			return err
		}
	}
	for _, p := range emptied {
		if !clash[p] {
			m.replaceDir(p)
		}
	}
	return nil
}

// layout is the merged tree as the changes planned so far would make it: ours's
// tree with m.changes applied, looked up path by path.
type layout struct {
	m  *merger
	at map[string]int // tree path -> its change in m.changes
}

func newLayout(m *merger) *layout {
	l := &layout{m: m, at: map[string]int{}}
	for i, c := range m.changes {
		l.at[c.Path] = i
	}
	return l
}

// ours returns the entry of ours's tree at p, if there is one.
func (l *layout) ours(p string) (gitlog.Entry, bool, error) {
	e, err := l.m.v.repo.Lookup(l.m.oursT, p)
	switch {
	case err == nil:
		return e, true, nil
	case errors.Is(err, gitlog.ErrNotFound), errors.Is(err, gitlog.ErrNotDir):
		return e, false, nil
	}
	return e, false, fmt.Errorf("vault: merge: %w", err)
}

// isFile says whether the merged tree will hold a file at p.
func (l *layout) isFile(p string) (bool, error) {
	if i, ok := l.at[p]; ok {
		return l.m.changes[i].Op != gitlog.Delete, nil
	}
	e, ok, err := l.ours(p)
	return ok && !e.IsDir(), err
}

// taken says whether the merged tree, as planned so far, has anything at p.
func (l *layout) taken(p string) (bool, error) {
	if i, ok := l.at[p]; ok {
		return l.m.changes[i].Op != gitlog.Delete, nil
	}
	for _, c := range l.m.changes {
		if c.Op != gitlog.Delete && strings.HasPrefix(c.Path, p+"/") {
			return true, nil
		}
	}
	_, ok, err := l.ours(p)
	return ok, err
}

// clashes returns the paths where the merged tree would hold a file and a
// directory at once (the file is to move aside), and emptied, the new files'
// paths where ours has a directory.
func (l *layout) clashes() (clash map[string]bool, emptied []string, err error) {
	clash = map[string]bool{}
	for _, c := range l.m.changes {
		if c.Op == gitlog.Delete || !isMemory(c.Path) {
			continue
		}
		if err := l.filesAbove(c.Path, clash); err != nil {
			return nil, nil, err
		}
		dir, held, err := l.dirHeld(c.Path)
		if err != nil {
			return nil, nil, err
		}
		if dir {
			emptied = append(emptied, c.Path)
		}
		if held {
			clash[c.Path] = true
		}
	}
	return clash, emptied, nil
}

// filesAbove adds to clash each file the merged tree would hold above the new
// file at p: made on a side that had no directory there.
func (l *layout) filesAbove(p string, clash map[string]bool) error {
	for i := len(memDir) + 1; ; {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			return nil
		}
		i += j
		f, err := l.isFile(p[:i])
		if err != nil {
			return err
		}
		if f {
			clash[p[:i]] = true
		}
		i++
	}
}

// dirHeld says whether ours has a directory at the new file's path p, and
// whether the planned changes leave a file in it.
func (l *layout) dirHeld(p string) (dir, held bool, err error) {
	e, ok, err := l.ours(p)
	if err != nil || !ok || !e.IsDir() {
		return false, false, err
	}
	under, err := l.m.v.repo.DiffTrees(gitlog.ZeroHash, l.m.oursT, p)
	if err != nil {
		return false, false, fmt.Errorf("vault: merge: %w", err)
	}
	for _, f := range under {
		if i, ok := l.at[f.Path]; !ok || l.m.changes[i].Op != gitlog.Delete {
			return true, true, nil
		}
	}
	return true, false, nil
}

// moveAside moves the file at p to the first free name beside it and names the
// new name as a conflict, moved aside.
func (l *layout) moveAside(p string) error {
	m := l.m
	e, oursFile, err := l.ours(p)
	if err != nil {
		return err
	}
	oursFile = oursFile && !e.IsDir()
	side := "theirs"
	if oursFile {
		side = "ours"
	}
	q, err := l.freeName(p, side)
	if err != nil {
		return err
	}
	if i, ok := l.at[p]; ok {
		m.changes[i].Path = q
		l.at[q] = i
		delete(l.at, p)
	} else {
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Link, Path: q, Hash: e.Hash})
		l.at[q] = len(m.changes) - 1
	}
	if oursFile {
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Delete, Path: p})
		l.at[p] = len(m.changes) - 1
	}
	found := false
	for i, c := range m.conflicts {
		if c == "/"+p {
			m.conflicts[i], found = "/"+q, true
		}
	}
	if !found {
		m.conflicts = append(m.conflicts, "/"+q)
	}
	m.movedAside = append(m.movedAside, "/"+q)
	return nil
}

// freeName is the first of p's aside names (asideName) that is a valid path
// and that nothing in the merged tree takes.
func (l *layout) freeName(stored, side string) (string, error) {
	p, err := l.m.openTree(stored)
	if err != nil {
		return "", err
	}
	maxSegment := l.m.codec().maxName()
	for n := 1; n <= 1000; n++ {
		q := asideName(p, side, n, maxSegment)
		if _, err := CleanPath("/" + q); err != nil {
			continue
		}
		if q, err = l.m.sealTree(q); err != nil {
			continue // longer than a sealed name may be
		}
		t, err := l.taken(q)
		if err != nil {
			return "", err
		}
		if !t {
			return q, nil
		}
	}
	return "", fmt.Errorf("vault: merge: no free name beside %s", p)
}

// replaceDir makes way for the new file at p where ours has a directory whose
// files all go: the directory goes as a whole, first, for a file cannot be put
// over a directory, even an emptied one.
func (m *merger) replaceDir(p string) {
	kept := m.changes[:0]
	for _, c := range m.changes {
		if c.Op != gitlog.Delete || !strings.HasPrefix(c.Path, p+"/") {
			kept = append(kept, c)
		}
	}
	m.changes = append(kept, gitlog.Change{Op: gitlog.Delete, Path: p})
}

// asideName is the nth name tried for the file at tree path p moved aside from
// a directory: p.conflict-side, then p.conflict-side-n, with p's last segment
// cut short (at a character) so that the segment stays within maxSegment
// bytes (CleanPath's 255, or the 143 a sealed name holds) and the path
// within CleanPath's limit. Should p's directory leave no room, the name
// goes to the top of the memory directory.
func asideName(p, side string, n, maxSegment int) string {
	dir, name := path.Split(p)
	suffix := ".conflict-" + side
	if n > 1 {
		suffix += "-" + strconv.Itoa(n)
	}
	room := func(dir string) int {
		// The memory path is "/" + the tree path.
		return min(len(name), maxSegment-len(suffix), maxPathLen-1-len(dir)-len(suffix))
	}
	keep := room(dir)
	if keep < 1 {
		dir = memDir + "/"
		keep = room(dir)
	}
	for keep > 0 && keep < len(name) && !utf8.RuneStart(name[keep]) {
		keep--
	}
	return dir + name[:keep] + suffix
}
