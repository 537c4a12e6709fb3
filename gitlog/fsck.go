package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Problem is one thing Check found wrong.
type Problem struct {
	Object Hash   // the object concerned, if any
	Path   string // where in the tree, if known
	What   string
}

func (p Problem) String() string {
	var b strings.Builder
	if !p.Object.IsZero() {
		b.WriteString(p.Object.String()[:12] + " ")
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.What)
	return b.String()
}

// visitFunc is Check's visit.
type visitFunc = func(path string, blob Hash, head bool)

// Check verifies the repository: Branch names a commit; every commit, tree and
// blob reachable from it exists, decodes and hashes to its name. It returns what
// is wrong; the error is only for a failure to run the check at all. visit,
// when set, is called for every blob reachable from Branch, once per (commit,
// path) where the blob first appears on a path, with head true for the blobs
// of the head commit's tree.
func (r *Repo) Check(ctx context.Context, visit func(path string, blob Hash, head bool)) ([]Problem, error) {
	head, err := r.Head()
	if err != nil {
		return []Problem{{What: fmt.Sprintf("branch %s is unreadable: %v", Branch, err)}}, nil
	}
	if head.IsZero() {
		return []Problem{{What: fmt.Sprintf("branch %s does not exist", Branch)}}, nil
	}
	return r.checkFrom(ctx, head, visit)
}

func (r *Repo) checkFrom(ctx context.Context, head Hash, visit visitFunc) ([]Problem, error) {
	c := &checker{r: r, ok: map[Hash]bool{}, visit: visit}
	seen := map[Hash]bool{}
	queue := []Hash{head}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		commit, ok := c.commit(h)
		if !ok {
			continue
		}
		c.tree(fromGG(commit.TreeHash), "", h == head)
		queue = append(queue, gitobject.FromGoGit(commit.ParentHashes)...)
	}
	return c.problems, nil
}

type checker struct {
	r        *Repo
	ok       map[Hash]bool // objects already verified
	visit    visitFunc
	problems []Problem
}

func (c *checker) report(h Hash, path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Object: h, Path: path, What: fmt.Sprintf(format, args...)})
}

// object reads h, checks its type and that its content hashes to h. The
// content is streamed into the hash. A tree entry's object of another type
// than its mode says, and a blob larger than the repository's blob limit
// (never inflated), are not reported here: they are what the caller's check of
// entries (vault's admission) judges, and what it may have left out. A tree or
// commit larger than maxStruct is reported.
func (c *checker) object(h Hash, t plumbing.ObjectType, path string) (plumbing.EncodedObject, bool) {
	o, err := c.r.object(plumbing.AnyObject, h)
	if err != nil {
		c.report(h, path, "%s is missing or unreadable: %v", t, err)
		return nil, false
	}
	if o.Type() != t {
		if path == "" { // a commit's own tree, or a parent
			c.report(h, path, "is a %s, want a %s", o.Type(), t)
		}
		return nil, false // an entry's: the caller's check of entries says it
	}
	limit := int64(maxStruct)
	if t == plumbing.BlobObject {
		limit = c.r.maxBlob.get()
	}
	if o.Size() > limit {
		if t != plumbing.BlobObject {
			c.report(h, path, "%s of %d bytes, larger than the limit of %d: not read", t, o.Size(), limit)
		}
		return nil, false // a blob: the caller's check of entries says it
	}
	if got, err := c.r.hashObject(o); err != nil {
		c.report(h, path, "%s is unreadable: %v", t, err)
		return nil, false
	} else if got != h {
		c.report(h, path, "%s content hashes to %s: the object is corrupt", t, got)
		return nil, false
	}
	return o, true
}

// hashObject streams o's content into git's hash of it.
func (r *Repo) hashObject(o plumbing.EncodedObject) (Hash, error) {
	r.readMu.Lock()
	defer r.readMu.Unlock()
	rd, err := o.Reader()
	if err != nil {
		return ZeroHash, err
	}
	defer rd.Close()
	hw := plumbing.NewHasher(o.Type(), o.Size())
	if n, err := io.Copy(hw, io.LimitReader(rd, o.Size())); err != nil {
		return ZeroHash, err
	} else if n != o.Size() {
		return ZeroHash, fmt.Errorf("%d bytes where the header says %d", n, o.Size())
	}
	return fromGG(hw.Sum()), nil
}

func (c *checker) commit(h Hash) (*object.Commit, bool) {
	o, ok := c.object(h, plumbing.CommitObject, "")
	if !ok {
		return nil, false
	}
	var commit object.Commit
	if err := commit.Decode(o); err != nil {
		c.report(h, "", "commit does not decode: %v", err)
		return nil, false
	}
	return &commit, true
}

func (c *checker) tree(h Hash, path string, head bool) {
	if c.ok[h] && !head {
		return
	}
	if _, ok := c.object(h, plumbing.TreeObject, path); !ok {
		return
	}
	c.ok[h] = true
	es, err := c.r.ReadTree(h)
	if err != nil {
		c.report(h, path, "tree does not decode: %v", err)
		return
	}
	for _, e := range es {
		p := e.Name
		if path != "" {
			p = path + "/" + e.Name
		}
		if e.IsDir() {
			c.tree(e.Hash, p, head)
			continue
		}
		if e.Mode == modeSubmodule {
			continue // names a commit of another repository, as git fsck has it
		}
		if !c.ok[e.Hash] {
			if _, ok := c.object(e.Hash, plumbing.BlobObject, p); !ok {
				continue
			}
			c.ok[e.Hash] = true
			if c.visit != nil && !head {
				c.visit(p, e.Hash, false)
			}
		}
		if c.visit != nil && head {
			c.visit(p, e.Hash, true)
		}
	}
}

// Repair points Branch at the newest commit (by committer time) whose whole
// history checks out, when Branch is unreadable or names a broken commit. It
// deletes nothing. It returns the commit chosen, or ZeroHash if Branch was sound.
// It runs under the writer lock w.
func (w *Writer) Repair(ctx context.Context) (Hash, error) {
	r := w.r
	if problems, err := r.Check(ctx, nil); err != nil || len(problems) == 0 {
		return ZeroHash, err
	}
	r.readMu.Lock() // go-git's storage is not safe for concurrent reads
	iter, err := r.st.IterEncodedObjects(plumbing.CommitObject)
	if err != nil {
		r.readMu.Unlock()
		return ZeroHash, fmt.Errorf("gitlog: repair: %w", err)
	}
	var commits []*object.Commit
	iter.ForEach(func(o plumbing.EncodedObject) error {
		var c object.Commit
		if c.Decode(o) == nil {
			c.Hash = o.Hash()
			commits = append(commits, &c)
		}
		return nil
	})
	r.readMu.Unlock()
	r.jobjs.Refresh(r.journalPath())
	for _, o := range r.jobjs.Commits() {
		var c object.Commit
		if c.Decode(memoryObject(o)) == nil {
			c.Hash = gg(o.Hash)
			commits = append(commits, &c)
		}
	}
	// Commits made within one second share a time: the deeper one is newer.
	depth := generations(commits)
	sort.Slice(commits, func(i, j int) bool {
		ci, cj := commits[i], commits[j]
		if !ci.Committer.When.Equal(cj.Committer.When) {
			return ci.Committer.When.After(cj.Committer.When)
		}
		return depth[ci.Hash] > depth[cj.Hash]
	})
	for _, cand := range commits {
		if problems, err := r.checkFrom(ctx, fromGG(cand.Hash), nil); err != nil {
			return ZeroHash, err
		} else if len(problems) == 0 {
			return fromGG(cand.Hash), r.writeRefDurable(fromGG(cand.Hash))
		}
	}
	return ZeroHash, errors.New("gitlog: repair: no sound commit found")
}

// generations numbers each commit by the length of its first-parent chain among
// commits.
func generations(commits []*object.Commit) map[plumbing.Hash]int {
	byHash := make(map[plumbing.Hash]*object.Commit, len(commits))
	for _, c := range commits {
		byHash[c.Hash] = c
	}
	depth := make(map[plumbing.Hash]int, len(commits))
	for _, c := range commits {
		var chain []plumbing.Hash
		h := c.Hash
		for {
			if _, ok := depth[h]; ok {
				break
			}
			cc, ok := byHash[h]
			if !ok {
				depth[h] = 0
				break
			}
			chain = append(chain, h)
			if len(cc.ParentHashes) == 0 {
				depth[h] = 1
				chain = chain[:len(chain)-1]
				break
			}
			h = cc.ParentHashes[0]
		}
		for i := len(chain) - 1; i >= 0; i-- {
			depth[chain[i]] = depth[byHash[chain[i]].ParentHashes[0]] + 1
		}
	}
	return depth
}

// writeRefDurable points Branch at h, in the journal for memvault's readers
// and in the ref's file for git's, whatever either held (it was broken).
func (r *Repo) writeRefDurable(h Hash) error {
	cur, err := r.Ref(Branch)
	if err != nil {
		return err
	}
	if err := r.writeRef(Branch, h); err != nil {
		return err
	}
	if err := r.disk.SyncDir(filepath.Dir(r.refPath(Branch))); err != nil {
		return err
	}
	if err := r.persist(Branch, cur, h, nil); err != nil {
		return err
	}
	_, err = r.flushJournal(context.Background(), false)
	return err
}
