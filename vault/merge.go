package vault

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// A merge of diverged histories is done on plaintext, path by path: a path that
// one side changed takes that side; a path both changed is decrypted three times
// (base, ours, theirs), merged by lines and encrypted again, keeping both versions
// between conflict markers where the changes overlap. Nothing decrypted is written
// anywhere but into the new ciphertext.

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

// merger holds one merge's inputs while it is planned.
type merger struct {
	v                        *Vault
	ctx                      context.Context
	base, ours, theirs       gitlog.Hash // commits
	baseT, oursT, theirsT    gitlog.Hash // their root trees
	labels                   textdiff.Labels
	changes                  []gitlog.Change
	conflicts                []string // memory paths
	movedAside               []string // the conflicts that are files moved aside
	recipients               []ageRecipient
	oursRecips, theirsRecips bool // whether each side's files are already encrypted to recipients
	renames                  map[gitlog.Hash][][2]string
	below                    map[gitlog.Hash]bool // the commits reachable from base, if a side has merges
}

// side is one path's blob in the base and on each side; ZeroHash where absent.
type side struct{ b, o, t gitlog.Hash }

// planMerge returns the change set that turns ours's tree into the merge of ours
// and theirs from base, the memory paths named as conflicts, and those of them
// that are files moved aside from a directory.
func (v *Vault) planMerge(ctx context.Context, base, ours, theirs gitlog.Hash, labels textdiff.Labels) (changes []gitlog.Change, conflicts, movedAside []string, err error) {
	m := &merger{v: v, ctx: ctx, base: base, ours: ours, theirs: theirs, labels: labels, renames: map[gitlog.Hash][][2]string{}}
	for _, p := range []struct {
		c gitlog.Hash
		t *gitlog.Hash
	}{{base, &m.baseT}, {ours, &m.oursT}, {theirs, &m.theirsT}} {
		if *p.t, err = v.repo.RootTree(p.c); err != nil {
			return nil, nil, nil, fmt.Errorf("vault: merge: %w", err)
		}
	}
	paths, err := m.changedPaths()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := m.mergeRecipients(paths); err != nil {
		return nil, nil, nil, err
	}
	handled := map[string]bool{recipientsPath: true}
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

// mergeRecipients merges the recipients file (plaintext) and loads the recipients
// the merged files are encrypted to. Both sides changing it so that the lines
// conflict is an error wrapping ErrRecipients: the file must parse.
func (m *merger) mergeRecipients(paths map[string]side) error {
	s, ok := paths[recipientsPath]
	if !ok {
		s = side{}
		e, err := m.v.repo.Lookup(m.oursT, recipientsPath)
		if err != nil {
			return fmt.Errorf("vault: merge: %s: %w", recipientsPath, err)
		}
		s.b, s.o, s.t = e.Hash, e.Hash, e.Hash
	}
	content, err := m.v.repo.ReadBlob(s.o)
	switch {
	case err != nil:
		return fmt.Errorf("vault: merge: %s: %w", recipientsPath, err)
	case s.o == s.t || s.t == s.b:
	case s.o == s.b:
		if content, err = m.v.repo.ReadBlob(s.t); err != nil {
			return fmt.Errorf("vault: merge: %s: %w", recipientsPath, err)
		}
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Link, Path: recipientsPath, Hash: s.t})
	default:
		var n int
		if content, n, err = m.merge3(recipientsPath, s); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("vault: merge: both sides changed %s in the same place: %w", recipientsPath, ErrRecipients)
		}
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: recipientsPath, Data: content})
	}
	if m.recipients, err = m.v.keys.parseRecipients(content); err != nil {
		return err
	}
	m.oursRecips = s.o == s.t || s.t == s.b
	m.theirsRecips = s.o == s.t || s.o == s.b && s.t != s.b
	return nil
}

// mergePath resolves one path both or either side changed.
func (m *merger) mergePath(p string, s side) error {
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
	plain, err := m.v.readBlob(p, h)
	if err != nil {
		return err
	}
	ct, err := encrypt(plain, m.recipients)
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
		if merged, err = encrypt(merged, m.recipients); err != nil {
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
			texts[i], err = m.v.readBlob("/"+p, h)
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

// separateFilesAndDirs finds the files the planned changes would leave where a
// directory also is, and moves each aside (see above). A directory of ours that
// a new file replaces, once all its files go, goes as a whole first.
func (m *merger) separateFilesAndDirs() error {
	at := map[string]int{} // tree path -> its change in m.changes
	for i, c := range m.changes {
		at[c.Path] = i
	}
	// ours returns the entry of ours's tree at p, if there is one.
	ours := func(p string) (gitlog.Entry, bool, error) {
		e, err := m.v.repo.Lookup(m.oursT, p)
		switch {
		case err == nil:
			return e, true, nil
		case errors.Is(err, gitlog.ErrNotFound), errors.Is(err, gitlog.ErrNotDir):
			return e, false, nil
		}
		return e, false, fmt.Errorf("vault: merge: %w", err)
	}
	// isFile says whether the merged tree will hold a file at p.
	isFile := func(p string) (bool, error) {
		if i, ok := at[p]; ok {
			return m.changes[i].Op != gitlog.Delete, nil
		}
		e, ok, err := ours(p)
		return ok && !e.IsDir(), err
	}
	clash := map[string]bool{}
	var emptied []string // new files where ours has a directory
	for _, c := range m.changes {
		if c.Op == gitlog.Delete || !isMemory(c.Path) {
			continue
		}
		// A file above the new file: on a side that had no directory there.
		for i := len(memDir) + 1; ; {
			j := strings.IndexByte(c.Path[i:], '/')
			if j < 0 {
				break
			}
			i += j
			f, err := isFile(c.Path[:i])
			if err != nil {
				return err
			}
			if f {
				clash[c.Path[:i]] = true
			}
			i++
		}
		// A directory of ours at the new file's path, still holding a file.
		e, ok, err := ours(c.Path)
		if err != nil {
			return err
		}
		if !ok || !e.IsDir() {
			continue
		}
		under, err := m.v.repo.DiffTrees(gitlog.ZeroHash, m.oursT, c.Path)
		if err != nil {
			return fmt.Errorf("vault: merge: %w", err)
		}
		emptied = append(emptied, c.Path)
		for _, f := range under {
			if i, ok := at[f.Path]; !ok || m.changes[i].Op != gitlog.Delete {
				clash[c.Path] = true
				break
			}
		}
	}
	// taken says whether the merged tree, as planned so far, has anything at p.
	taken := func(p string) (bool, error) {
		if i, ok := at[p]; ok {
			return m.changes[i].Op != gitlog.Delete, nil
		}
		for _, c := range m.changes {
			if c.Op != gitlog.Delete && strings.HasPrefix(c.Path, p+"/") {
				return true, nil
			}
		}
		_, ok, err := ours(p)
		return ok, err
	}
	paths := make([]string, 0, len(clash))
	for p := range clash {
		paths = append(paths, p)
	}
	sort.Strings(paths) // a file above another first: once it moves, that one's parent is free
	for _, p := range paths {
		e, oursFile, err := ours(p)
		if err != nil {
			return err
		}
		oursFile = oursFile && !e.IsDir()
		side := "theirs"
		if oursFile {
			side = "ours"
		}
		var q string
		for n := 1; ; n++ {
			if n > 1000 {
				return fmt.Errorf("vault: merge: no free name beside %s", p)
			}
			q = asideName(p, side, n)
			if _, err := CleanPath("/" + q); err != nil {
				continue
			}
			t, err := taken(q)
			if err != nil {
				return err
			}
			if !t {
				break
			}
		}
		if i, ok := at[p]; ok {
			m.changes[i].Path = q
			at[q] = i
			delete(at, p)
		} else {
			m.changes = append(m.changes, gitlog.Change{Op: gitlog.Link, Path: q, Hash: e.Hash})
			at[q] = len(m.changes) - 1
		}
		if oursFile {
			m.changes = append(m.changes, gitlog.Change{Op: gitlog.Delete, Path: p})
			at[p] = len(m.changes) - 1
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
	}
	// A new file where ours has a directory whose files all go: the directory
	// goes as a whole, first, for a file cannot be put over a directory, even
	// an emptied one.
	for _, p := range emptied {
		if clash[p] {
			continue
		}
		kept := m.changes[:0]
		for _, c := range m.changes {
			if c.Op != gitlog.Delete || !strings.HasPrefix(c.Path, p+"/") {
				kept = append(kept, c)
			}
		}
		m.changes = append(kept, gitlog.Change{Op: gitlog.Delete, Path: p})
	}
	return nil
}

// asideName is the nth name tried for the file at tree path p moved aside from
// a directory: p.conflict-side, then p.conflict-side-n, with p's last segment
// cut short (at a character) so that the segment and the path stay within the
// limits CleanPath sets. Should p's directory leave no room, the name goes to
// the top of the memory directory.
func asideName(p, side string, n int) string {
	dir, name := path.Split(p)
	suffix := ".conflict-" + side
	if n > 1 {
		suffix += "-" + strconv.Itoa(n)
	}
	room := func(dir string) int {
		// The memory path is "/" + the tree path.
		return min(len(name), maxSegmentLen-len(suffix), maxPathLen-1-len(dir)-len(suffix))
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
		plain, err := m.v.readBlob("/"+c.Path, c.To)
		if err != nil {
			return err
		}
		ct, err := encrypt(plain, m.recipients)
		if err != nil {
			return err
		}
		m.changes = append(m.changes, gitlog.Change{Op: gitlog.Put, Path: c.Path, Data: ct})
	}
	return nil
}

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
func (m *merger) follow(head gitlog.Hash, p string) (string, error) {
	rs, ok := m.renames[head]
	if !ok {
		var err error
		if rs, err = m.sideRenames(head); err != nil {
			return "", err
		}
		m.renames[head] = rs
	}
	for _, r := range rs {
		switch {
		case r[1] == "": // a delete
			if p == r[0] || strings.HasPrefix(p, r[0]+"/") {
				return "", nil
			}
		case p == r[0]:
			p = r[1]
		case strings.HasPrefix(p, r[0]+"/"):
			p = r[1] + p[len(r[0]):]
		}
	}
	return p, nil
}

// sideRenames lists, oldest first, the renames (tree paths, from and to) and the
// deletes (the path and "") of the commits reachable from head and not from the
// merge base.
func (m *merger) sideRenames(head gitlog.Hash) ([][2]string, error) {
	cs, err := m.sideCommits(head)
	if err != nil {
		return nil, err
	}
	var rs [][2]string
	for _, c := range cs {
		_, tr := parseMessage(c.Message)
		switch trailerValue(tr, trCommand) {
		case "rename":
			from, err1 := treePath(trailerValue(tr, trPath))
			to, err2 := treePath(trailerValue(tr, trNewPath))
			if err1 == nil && err2 == nil {
				rs = append(rs, [2]string{from, to})
			}
		case "delete":
			if p, err := treePath(trailerValue(tr, trPath)); err == nil {
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
// base, the usual case, is read alone; a side with a merge needs the whole
// history below the base, to know where to stop.
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

// sideGraph is sideCommits for a side with merges.
func (m *merger) sideGraph(head gitlog.Hash) ([]*gitlog.Commit, error) {
	if m.below == nil {
		m.below = map[gitlog.Hash]bool{}
		if err := m.v.repo.Walk(m.base, func(c *gitlog.Commit) error {
			m.below[c.Hash] = true
			return m.ctx.Err()
		}); err != nil {
			m.below = nil
			return nil, fmt.Errorf("vault: merge: %w", err)
		}
	}
	below := m.below
	// A depth-first walk that lists a commit once all its parents are listed.
	var out []*gitlog.Commit
	read := map[gitlog.Hash]*gitlog.Commit{}
	done := map[gitlog.Hash]bool{}
	stack := []gitlog.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		if done[h] || below[h] {
			stack = stack[:len(stack)-1]
			continue
		}
		c, ok := read[h]
		if !ok {
			var err error
			if c, err = m.v.repo.ReadCommit(h); err != nil {
				return nil, fmt.Errorf("vault: merge: %w", err)
			}
			read[h] = c
		}
		waiting := false
		for i := len(c.ParentHashes) - 1; i >= 0; i-- {
			if p := c.ParentHashes[i]; !done[p] && !below[p] {
				stack = append(stack, p)
				waiting = true
			}
		}
		if waiting {
			continue
		}
		stack = stack[:len(stack)-1]
		done[h] = true
		out = append(out, c)
	}
	return out, nil
}

var errNoBase = errors.New("the histories share no commit")
