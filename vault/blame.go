package vault

// Blame reads a file's history once, along first parents, following renames:
// each version the path held is decrypted once (in parallel), and consecutive
// versions are compared with the same line diff as everything else here
// (textdiff). A kept line keeps its attribution; an inserted line belongs to the
// commit that inserted it. That is git blame's answer on a linear history.
//
// What git cannot say: an undo (restore, revert, rollback) or a sync merge that
// puts a line back names itself as the line's commit, as git would, and names
// as Origin the commit that first wrote that line. "Back" means: the same text
// was in an earlier version of this file (along the walk, gaps where the file
// was deleted included) and had been removed since; for a merge, also a line of
// the merged side's version of the file, attributed by blaming that side. A
// line that has an Origin keeps it while it stays.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// BlameLine is one line of a file with the commit that brought it.
type BlameLine struct {
	Number int    `json:"line"`   // 1-based
	Text   string `json:"text"`   // without its "\n"
	Commit string `json:"commit"` // the commit whose change put the line here
	Path   string `json:"path"`   // the file's memory path in that commit
	// Origin is, for a line an undo or a sync merge brought back, the commit
	// that first wrote it (its Path then in OriginPath); "" otherwise.
	Origin     string `json:"origin,omitempty"`
	OriginPath string `json:"origin_path,omitempty"`
}

// Blame is a file's lines with their commits.
type Blame struct {
	Path   string      `json:"path"`   // the memory path blamed
	Commit string      `json:"commit"` // the revision it was read at
	Lines  []BlameLine `json:"lines"`
	// Commits holds the record of every commit the lines name, by full hash.
	Commits map[string]Record `json:"commits"`
}

// Blame attributes each line of the memory file at path, as it is at revision
// rev (see Resolve; "" is main), to the commit that brought it, following the
// file back through renames. See the top of blame.go for what an undo or a sync
// merge that brings a line back is given. The error is a *PathError for an
// invalid path, wraps ErrUnknownRevision for a bad rev, ErrNotExist when no file
// was at path then, ErrIsDir for a directory, and ErrNoIdentity or ErrDecrypt
// when a version cannot be decrypted.
func (v *Vault) Blame(ctx context.Context, path, rev string) (*Blame, error) {
	cp, err := CleanPath(path)
	if err != nil {
		return nil, err
	}
	h, root, err := v.revisionRoot(rev)
	if err != nil {
		return nil, err
	}
	ns, err := v.namesOfRoot(root)
	if err != nil {
		return nil, err
	}
	tp, err := ns.treePath(cp)
	if unsealable(err) {
		return nil, fmt.Errorf("vault: blame %s: no file there at %s: %w", cp, shortHash(h), ErrNotExist)
	} else if err != nil {
		return nil, err
	}
	e, err := v.repo.Lookup(root, tp)
	switch {
	case errors.Is(err, gitlog.ErrNotFound) || errors.Is(err, gitlog.ErrNotDir):
		return nil, fmt.Errorf("vault: blame %s: no file there at %s: %w", cp, shortHash(h), ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("vault: blame %s: %w", cp, err)
	case e.IsDir():
		return nil, fmt.Errorf("vault: blame %s: %w", cp, ErrIsDir)
	}
	b := &blamer{v: v, memo: map[memoKey]*blameState{}, index: map[gitlog.Hash]int32{}}
	st, err := b.blame(ctx, h, tp, 0)
	if err != nil {
		return nil, err
	}
	out := &Blame{Path: cp, Commit: h.String(), Lines: make([]BlameLine, len(st.lines)), Commits: map[string]Record{}}
	for i, l := range st.lines {
		a := st.attrs[i]
		c := b.commits[a.c]
		bl := BlameLine{Number: i + 1, Text: strings.TrimSuffix(l, "\n"), Commit: c.rec.Commit, Path: c.path}
		out.Commits[c.rec.Commit] = c.rec
		if a.o >= 0 {
			o := b.commits[a.o]
			bl.Origin, bl.OriginPath = o.rec.Commit, o.path
			out.Commits[o.rec.Commit] = o.rec
		}
		out.Lines[i] = bl
	}
	for h, r := range out.Commits {
		recs := []Record{r}
		if err := v.checkRecords(recs); err != nil {
			return nil, fmt.Errorf("vault: blame %s: %w", cp, err)
		}
		out.Commits[h] = recs[0]
	}
	return out, nil
}

// attr is one line's attribution: indexes into blamer.commits; o is -1 when the
// line has no origin apart from c.
type attr struct{ c, o int32 }

// origin is the commit that first wrote the line.
func (a attr) origin() attr {
	if a.o >= 0 {
		return attr{a.o, -1}
	}
	return attr{a.c, -1}
}

type memoKey struct {
	h gitlog.Hash
	p string
}

type blameState struct {
	lines []string
	attrs []attr
}

type blameCommit struct {
	rec  Record
	path string // memory path of the file in this commit
}

// blamer holds one Blame call's commits and the states it has worked out, so
// that blaming a merge's other side stops where it meets known history.
type blamer struct {
	v       *Vault
	commits []blameCommit
	index   map[gitlog.Hash]int32
	memo    map[memoKey]*blameState // by commit that changed the file (the walk's versions) and its path
}

// blameWindow is how many versions Blame decrypts together.
const blameWindow = 128

// maxMergeDepth bounds how deep blaming a merge's other side may recurse.
const maxMergeDepth = 4

type blameVersion struct {
	hash   gitlog.Hash
	c      *gitlog.Commit
	rec    Record      // c's, opened
	plain  string      // the memory path of the file in c
	path   string      // its tree path in c
	parent gitlog.Hash // the merged side (second parent) of a merge
	blob   gitlog.Hash // zero: no file here
}

// blame works out the state of the file at tree path tp in commit from.
func (b *blamer) blame(ctx context.Context, from gitlog.Hash, tp string, depth int) (*blameState, error) {
	var vers []blameVersion
	var base *blameState
	err := b.v.repo.Walk(ctx, from, gitlog.WalkOptions{Path: tp, FirstParent: true}, func(c *gitlog.Commit, p string) (string, error) {
		if st, ok := b.memo[memoKey{c.Hash, p}]; ok {
			base = st
			return p, gitlog.ErrStop
		}
		ver := blameVersion{hash: c.Hash, c: c, path: p}
		if len(c.ParentHashes) > 1 {
			ver.parent = c.ParentHashes[1]
		}
		if e, err := b.v.repo.Lookup(c.TreeHash, p); err == nil && !e.IsDir() {
			ver.blob = e.Hash
		} else if err != nil && !errors.Is(err, gitlog.ErrNotFound) && !errors.Is(err, gitlog.ErrNotDir) {
			return p, err
		}
		rec, err := b.v.record(c)
		if err != nil {
			return p, err
		}
		k, err := b.v.sealKeyAt(c.TreeHash)
		if err != nil {
			return p, err
		}
		ns := b.v.codec(k)
		ver.rec = rec
		if ver.plain, err = ns.memPath(p); err != nil {
			return p, err
		}
		vers = append(vers, ver)
		q := renamedFrom(ns, rec, p)
		if q == p {
			q = b.movedBack(c, rec, p, ver.blob)
		}
		return b.v.pathInParent(c, k, q), nil
	})
	if err != nil {
		return nil, fmt.Errorf("vault: blame %s: %w", b.memPath(from, tp), err)
	}
	// States are kept for a merge's other side to stop at; a history without
	// merges keeps only the current one. Versions are decrypted a window at a
	// time, so a long history is never all in memory at once.
	keep := false
	for _, ver := range vers {
		keep = keep || !ver.parent.IsZero()
	}
	var texts [][]byte // texts[i-lo] is vers[i]'s
	lo := len(vers)
	text := func(i int) ([]byte, error) {
		if i < lo {
			lo = max(i-blameWindow+1, 0)
			refs := make([]fileRef, i+1-lo)
			for j := range refs {
				refs[j] = fileRef{path: vers[lo+j].plain[1:], hash: vers[lo+j].blob}
			}
			var err error
			if texts, err = b.v.readAll(ctx, refs); err != nil {
				return nil, err
			}
		}
		return texts[i-lo], nil
	}
	remember := func(ver blameVersion, st *blameState) {
		if keep {
			b.memo[memoKey{ver.hash, ver.path}] = st
		}
	}
	cur := &blameState{}
	if base != nil {
		cur = base
	}
	gone := map[string]attr{} // removed lines, by text: their origin
	for i := len(vers) - 1; i >= 0; i-- {
		ver := vers[i]
		ci := b.commit(ver)
		if ver.blob.IsZero() {
			for j, l := range cur.lines {
				gone[l] = cur.attrs[j].origin()
			}
			cur = &blameState{}
			remember(ver, cur)
			continue
		}
		data, err := text(i)
		if err != nil {
			return nil, err
		}
		next := &blameState{lines: textdiff.Lines(data)}
		next.attrs = make([]attr, len(next.lines))
		rec := &b.commits[ci].rec
		bringsBack := rec.Command == "restore" || rec.Command == "revert" || rec.Command == "rollback" || rec.Command == "merge"
		var theirs map[string]attr
		if rec.Command == "merge" && !ver.parent.IsZero() && depth < maxMergeDepth {
			if theirs, err = b.side(ctx, ver.parent, ver.path, depth+1); err != nil {
				return nil, err
			}
		}
		ai := 0 // next line of cur
		keep := func(a0, b0 int) {
			for ai < a0 {
				next.attrs[b0-(a0-ai)] = cur.attrs[ai]
				ai++
			}
		}
		for _, hk := range textdiff.Diff(cur.lines, next.lines) {
			keep(hk.A0, hk.B0)
			for j := hk.A0; j < hk.A1; j++ {
				gone[cur.lines[j]] = cur.attrs[j].origin()
			}
			ai = hk.A1
			for j := hk.B0; j < hk.B1; j++ {
				a := attr{ci, -1}
				if bringsBack {
					if o, ok := gone[next.lines[j]]; ok {
						a.o = o.c
					} else if o, ok := theirs[next.lines[j]]; ok {
						a.o = o.c
					}
				}
				next.attrs[j] = a
			}
		}
		keep(len(cur.lines), len(next.lines))
		cur = next
		remember(ver, cur)
	}
	if base == nil && len(vers) == 0 {
		return nil, fmt.Errorf("vault: blame %s: %w", b.memPath(from, tp), ErrNotExist)
	}
	return cur, nil
}

// side blames the file at tree path tp in commit h (a merge's other side) and
// returns its lines' origins by text.
func (b *blamer) side(ctx context.Context, h gitlog.Hash, tp string, depth int) (map[string]attr, error) {
	root, err := b.v.repo.RootTree(h)
	if err != nil {
		return nil, err
	}
	if e, err := b.v.repo.Lookup(root, tp); err != nil || e.IsDir() {
		return nil, nil // nothing there on that side
	}
	st, err := b.blame(ctx, h, tp, depth)
	if err != nil {
		return nil, err
	}
	out := make(map[string]attr, len(st.lines))
	for i, l := range st.lines {
		out[l] = st.attrs[i].origin()
	}
	return out, nil
}

func (b *blamer) commit(ver blameVersion) int32 {
	if i, ok := b.index[ver.hash]; ok {
		return i
	}
	i := int32(len(b.commits))
	b.commits = append(b.commits, blameCommit{rec: ver.rec, path: ver.plain})
	b.index[ver.hash] = i
	return i
}

// movedBack follows an undo that moved a file back where it was (a revert of
// a rename keeps the file's edits since by moving it): the file at p in c is
// not in c's first parent, but the same blob is elsewhere there. It returns
// that path, or p. Only undo commits are looked at, and only then is the
// parent's tree searched.
func (b *blamer) movedBack(c *gitlog.Commit, rec Record, p string, blob gitlog.Hash) string {
	if blob.IsZero() || len(c.ParentHashes) == 0 || rec.Command != "revert" && rec.Command != "restore" && rec.Command != "rollback" {
		return p
	}
	parent, err := b.v.repo.RootTree(c.ParentHashes[0])
	if err != nil {
		return p
	}
	if _, err := b.v.repo.Lookup(parent, p); err == nil {
		return p // there before: not moved
	}
	if q, ok := b.findBlob(parent, "", blob); ok {
		return q
	}
	return p
}

// findBlob returns the tree path below tree (at prefix) that holds blob.
func (b *blamer) findBlob(tree gitlog.Hash, prefix string, blob gitlog.Hash) (string, bool) {
	es, err := b.v.repo.ReadTree(tree)
	if err != nil {
		return "", false
	}
	for _, e := range es {
		p := path.Join(prefix, e.Name)
		if e.IsDir() {
			if q, ok := b.findBlob(e.Hash, p, blob); ok {
				return q, true
			}
		} else if e.Hash == blob {
			return p, true
		}
	}
	return "", false
}

// memPath names the tree path tp of commit from's tree in an error: opened
// when it opens.
func (b *blamer) memPath(from gitlog.Hash, tp string) string {
	if ns, err := b.v.namesAt(from); err == nil {
		if p, err := ns.memPath(tp); err == nil {
			return p
		}
	}
	return memPath(tp)
}
