package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Signature names an author, committer or tagger and the time.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// git is s as go-git writes it, its time in UTC: a local time zone in a
// commit or a tag would tell whoever reads the repository (a git host) where
// the writer is.
func (s Signature) git() object.Signature {
	return object.Signature{Name: s.Name, Email: s.Email, When: s.When.UTC()}
}

func signature(s object.Signature) Signature {
	return Signature{Name: s.Name, Email: s.Email, When: s.When}
}

// Commit is a commit as gitlog's callers see it.
type Commit struct {
	Hash         Hash
	TreeHash     Hash
	ParentHashes []Hash
	Author       Signature
	Committer    Signature
	Message      string
	// Signed is the armored signature the commit carries, unverified ("" for
	// none); SignedCommit gives what it covers, to verify it.
	Signed string
}

func commitRecord(c *object.Commit) *Commit {
	return &Commit{
		Hash: fromGG(c.Hash), TreeHash: fromGG(c.TreeHash), ParentHashes: gitobject.FromGoGit(c.ParentHashes),
		Author: signature(c.Author), Committer: signature(c.Committer), Message: c.Message, Signed: c.PGPSignature,
	}
}

// clone returns a copy of c that shares nothing with it.
func (c *Commit) clone() *Commit {
	cp := *c
	cp.ParentHashes = slices.Clone(c.ParentHashes)
	return &cp
}

// decodeCommit decodes the bytes of commit h. The layout git and memvault
// write (a tree, parents, an author, a committer, at most one signature, a
// blank line, the message) is read here, field by field as go-git reads it;
// anything else (an encoding, a mergetag, other headers, a line out of its
// place) goes to go-git's decoder, which knows every rule of git's. Through
// go-git's line scanner, decoding was about a tenth of a sync's CPU, a quarter
// of its allocations.
func decodeCommit(h Hash, data []byte) (*Commit, error) {
	if c, ok := parseCommit(data); ok {
		c.Hash = h
		return c, nil
	}
	gc, err := object.DecodeCommit(nil, &knownObject{h: h, t: plumbing.CommitObject, data: data})
	if err != nil {
		return nil, err
	}
	return commitRecord(gc), nil
}

// parseCommit decodes a commit laid out as git writes it; ok is false for
// anything else. Author and committer are decoded by go-git, and a
// signature's continuation lines lose their first space, as there.
func parseCommit(data []byte) (c *Commit, ok bool) {
	tree, parents, rest, ok := commitHead(data)
	if !ok {
		return nil, false
	}
	c = &Commit{TreeHash: tree, ParentHashes: parents}
	var author, committer []byte
	if author, rest, ok = headerLine(rest, "author "); !ok {
		return nil, false
	}
	if committer, rest, ok = headerLine(rest, "committer "); !ok {
		return nil, false
	}
	var s object.Signature
	s.Decode(author)
	c.Author = signature(s)
	s = object.Signature{}
	s.Decode(committer)
	c.Committer = signature(s)
	if sig, after, ok := headerLine(rest, "gpgsig "); ok {
		rest = after
		var b strings.Builder
		b.Grow(len(sig) + 1 + bytes.Index(rest, []byte("\n\n")))
		b.Write(sig)
		b.WriteByte('\n')
		for len(rest) > 0 && rest[0] == ' ' {
			n := bytes.IndexByte(rest, '\n')
			if n < 0 {
				return nil, false
			}
			b.Write(rest[1 : n+1])
			rest = rest[n+1:]
		}
		c.Signed = b.String()
	}
	msg, ok := bytes.CutPrefix(rest, []byte("\n"))
	if !ok {
		return nil, false
	}
	c.Message = string(msg)
	return c, true
}

// headerLine cuts the header line that starts with key (its name and a space)
// from the start of data: its value, without the newline, and what follows.
func headerLine(data []byte, key string) (value, rest []byte, ok bool) {
	v, ok := bytes.CutPrefix(data, []byte(key))
	if !ok {
		return nil, nil, false
	}
	n := bytes.IndexByte(v, '\n')
	if n < 0 {
		return nil, nil, false
	}
	return v[:n], v[n+1:], true
}

// CommitInfo is what a commit says besides its changes, and how it is made.
type CommitInfo struct {
	Message   string
	Author    Signature
	Committer Signature
	// Sign, when set, signs the commit: it is given the commit as git verifies
	// it, the object without its signature header, and returns the armored
	// signature git keeps in that header (an SSH signature in the "git"
	// namespace, as git's gpg.format=ssh makes). Without it the commit is
	// unsigned.
	Sign func(payload []byte) (armored string, err error)
	// Parents, when set, are the commit's parents in place of the parent
	// Commit is given, which the branch must still hold and whose tree the
	// changes still apply to: {parent, theirs} merges theirs (its objects in
	// the repository, after Fetch); {theirs} squashes parent's line onto
	// theirs, moving the branch in one step, so parent's own commits since
	// the two parted stay out of the history that is pushed (their content
	// is in the result).
	Parents []Hash
	// Tree, when set, is the commit's tree, already in the repository, in
	// place of parent's tree with changes applied; there are no changes then.
	Tree Hash
	// Packed puts the new blobs and trees in the repository as one pack,
	// written and synced before the commit is journaled, and only the commit
	// object in the journal: for a change of many files at once (an import of
	// ten thousand files is one pack file to write and sync instead of ten
	// thousand objects). A pack written for a commit that then fails holds
	// only unreferenced objects, which gc removes.
	Packed bool
	// Ref, when set, is the ref the commit moves instead of Branch, and
	// From the value Ref must hold (ZeroHash: Ref must not exist yet),
	// whatever the commit's parents: a line of commits kept beside the
	// branch (a review's pending changes), which may start from or merge
	// the branch's commits. The move goes through the journal as the
	// branch's does; the error wraps ErrStale when Ref does not hold From.
	Ref  string
	From Hash
}

// Commit applies changes, in order, to the tree of parent and commits the
// result on Branch with parent as its only parent (none for ZeroHash), or with
// info.Parents. Only the trees on the changed paths are rewritten. It returns
// an error wrapping ErrStale if Branch no longer points at parent, ErrNotFound
// if a Delete or Move names nothing, and ErrNotDir if a path descends through
// a file; nothing is written then. The commit is durable when Commit returns.
func (w *Writer) Commit(ctx context.Context, parent Hash, changes []Change, info CommitInfo) (Hash, error) {
	r := w.r
	parents := info.Parents
	if parents == nil && !parent.IsZero() {
		parents = []Hash{parent}
	}
	for _, p := range parents {
		if p.IsZero() {
			return ZeroHash, fmt.Errorf("gitlog: commit: a parent is no commit")
		}
	}
	// base is the tree the commit is a change from, for the history index:
	// its first parent's.
	base, err := r.RootTree(firstOf(parents))
	if err != nil {
		return ZeroHash, err
	}
	if !info.Tree.IsZero() {
		if len(changes) > 0 {
			return ZeroHash, fmt.Errorf("gitlog: commit: changes to a tree given whole")
		}
		return r.commitTree(parent, info.Tree, base, parents, info, nil, nil)
	}
	_, tree, b, err := r.buildTree(parent, changes)
	if err != nil {
		return ZeroHash, err
	}
	if info.Packed {
		if err := r.packObjects(ctx, b.objects); err != nil {
			return ZeroHash, err
		}
		b.objects = nil
	}
	return r.commitTree(parent, tree, base, parents, info, b.objects, b.trees)
}

// firstOf is the first of hs, or ZeroHash when there is none.
func firstOf(hs []Hash) Hash {
	if len(hs) == 0 {
		return ZeroHash
	}
	return hs[0]
}

// buildTree applies changes to the tree of commit base and returns that root, the
// new root and the builder holding the objects to write.
func (r *Repo) buildTree(base Hash, changes []Change) (root, tree Hash, b *builder, err error) {
	if root, err = r.RootTree(base); err != nil {
		return ZeroHash, ZeroHash, nil, err
	}
	b = &builder{r: r}
	if b.root, err = b.load(root); err != nil {
		return ZeroHash, ZeroHash, nil, err
	}
	for _, c := range changes {
		if err := b.apply(c); err != nil {
			return ZeroHash, ZeroHash, nil, err
		}
	}
	tree, ok, err := b.write(b.root)
	if err != nil {
		return ZeroHash, ZeroHash, nil, err
	}
	if !ok {
		empty := newObject(plumbing.TreeObject, nil)
		b.objects = append(b.objects, empty)
		tree = empty.Hash
	}
	return root, tree, b, nil
}

// commitTree writes a commit of tree with parents, together with the objects it
// needs, and moves Branch from old to it. Once that is done, trees (the new trees,
// decoded) go into the tree cache and the commit, a change from base (the first
// parent's tree), into the history index.
func (r *Repo) commitTree(old, tree, base Hash, parents []Hash, info CommitInfo, objs []rawObject, trees map[Hash][]Entry) (Hash, error) {
	c := &object.Commit{
		Author:       info.Author.git(),
		Committer:    info.Committer.git(),
		Message:      info.Message,
		TreeHash:     gg(tree),
		ParentHashes: gitobject.ToGoGit(parents),
	}
	mo, err := encodeCommit(c, info.Sign)
	if err != nil {
		return ZeroHash, err
	}
	data, err := readAll(mo)
	if err != nil {
		return ZeroHash, err
	}
	co := newObject(plumbing.CommitObject, data)
	objs = append(objs, co)
	ref := Branch
	if info.Ref != "" {
		ref, old = info.Ref, info.From
	}
	head, err := r.Ref(ref)
	if err != nil {
		return ZeroHash, err
	}
	if head != old {
		return ZeroHash, fmt.Errorf("gitlog: commit on %s: %w", old, ErrStale)
	}
	if err := r.persistAt(ref, old, co.Hash, objs, info.Committer.When); err != nil {
		return ZeroHash, err
	}
	for h, es := range trees {
		r.trees.put(h, es)
	}
	// The next write starts from this commit: keep it decoded from the bytes
	// written, so it reads back from the cache exactly as from the disk.
	if dc, err := decodeCommit(co.Hash, data); err == nil {
		r.commits.put(co.Hash, dc)
	}
	r.index.add(r, co.Hash, tree, base, parents)
	return co.Hash, nil
}
