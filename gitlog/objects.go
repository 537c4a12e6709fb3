package gitlog

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// objectSource reads the commits and trees missingObjects walks: a Repo, through
// its caches and read lock, or a repository served in process (file://).
type objectSource interface {
	commit(h Hash) (*Commit, error) // wraps ErrNotFound when h is not there; not to be changed
	tree(h Hash) ([]Entry, error)
}

type repoSource struct{ r *Repo }

func (s repoSource) commit(h Hash) (*Commit, error) { return s.r.readCommit(h) }
func (s repoSource) tree(h Hash) ([]Entry, error)   { return s.r.ReadTree(h) }

type storerSource struct{ sto storer.EncodedObjectStorer }

// packSource is storerSource over a repository served from a local path,
// reading its packs straight (see packSet) and its journal before the storage.
type packSource struct {
	sto   journaled
	packs *pack.Set
}

func (s packSource) commit(h Hash) (*Commit, error) {
	if _, ok := s.sto.j.Get(h); !ok {
		if data, ok := s.packs.Read(h, plumbing.CommitObject, maxStruct); ok {
			return decodeCommit(h, data)
		}
	}
	return storerSource{s.sto}.commit(h)
}

func (s packSource) tree(h Hash) ([]Entry, error) {
	if _, ok := s.sto.j.Get(h); !ok && !h.IsZero() {
		if data, ok := s.packs.Read(h, plumbing.TreeObject, maxStruct); ok {
			if es, ok := parseTree(data); ok {
				return es, nil
			}
		}
	}
	return storerSource{s.sto}.tree(h)
}

func (s storerSource) commit(h Hash) (*Commit, error) {
	c, err := object.GetCommit(s.sto, gg(h))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("gitlog: commit %s: %w", h, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return commitRecord(c), nil
}

func (s storerSource) tree(h Hash) ([]Entry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := object.GetTree(s.sto, gg(h))
	if err != nil {
		return nil, fmt.Errorf("gitlog: tree %s: %w", h, err)
	}
	es := make([]Entry, len(t.Entries))
	for i, te := range t.Entries {
		es[i] = entryOf(te)
	}
	return es, nil
}

// Which side of a transfer reaches a commit.
const (
	fromWant = 1 << iota // reachable from what the other side wants
	fromHave             // reachable from what the other side has
)

// walkNode is a commit met by missingObjects.
type walkNode struct {
	c      *Commit
	flags  uint8
	queued bool
}

// commitQueue is a max-heap of commits by committer time: newest first.
type commitQueue []*walkNode

func (q commitQueue) Len() int           { return len(q) }
func (q commitQueue) Less(i, j int) bool { return q[i].c.Committer.When.After(q[j].c.Committer.When) }
func (q commitQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)        { *q = append(*q, x.(*walkNode)) }
func (q *commitQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// missingObjects lists what a repository holding everything reachable from haves
// lacks to hold everything reachable from wants: each commit reachable from wants
// and not from haves, with the trees and blobs in which it differs from its first
// parent. A have src does not hold is ignored.
//
// It walks commits newest first, painting them by which side reaches them, and
// stops once every commit left to walk is reachable from a have, as git does; so
// it costs what is new, not the whole history, where go-git's revlist reads every
// tree of every commit the other side has. The answer never lacks an object the
// other side needs: anything left out is reachable from a have, or equal to what
// the commit's first parent holds at that path, which is sent itself or reachable
// from a have. A clock skew between commits can only add objects the other side
// has already.
func missingObjects(ctx context.Context, src objectSource, wants, haves []Hash) ([]Hash, error) {
	nodes := map[Hash]*walkNode{}
	var order []*walkNode // in the order met, for a stable answer
	var q commitQueue
	interesting := 0 // queued commits reached from wants only
	mark := func(h Hash, flags uint8) error {
		if n, ok := nodes[h]; ok {
			before := n.flags
			n.flags |= flags
			switch {
			case n.flags == before:
			case n.queued && before == fromWant:
				interesting-- // a have reaches it after all
			case !n.queued && n.flags&fromHave != 0 && before&fromHave == 0:
				n.queued = true // walked as wanted: take the have to its parents too
				heap.Push(&q, n)
			}
			return nil
		}
		c, err := src.commit(h)
		if errors.Is(err, ErrNotFound) && flags == fromHave {
			return nil
		}
		if err != nil {
			return err
		}
		n := &walkNode{c: c, flags: flags, queued: true}
		nodes[h] = n
		order = append(order, n)
		heap.Push(&q, n)
		if flags == fromWant {
			interesting++
		}
		return nil
	}
	for _, h := range haves {
		if err := mark(h, fromHave); err != nil {
			return nil, err
		}
	}
	for _, h := range wants {
		if err := mark(h, fromWant); err != nil {
			return nil, err
		}
	}
	for interesting > 0 && q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := heap.Pop(&q).(*walkNode)
		n.queued = false
		if n.flags == fromWant {
			interesting--
		}
		for _, p := range n.c.ParentHashes {
			if err := mark(p, n.flags); err != nil {
				return nil, err
			}
		}
	}

	var out []Hash
	seen := map[Hash]bool{}
	add := func(h Hash) {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	// Commits are walked newest first, so the trees a commit's walk reads as
	// the old side are mostly the next commit's new side: the trees of the
	// last two commits are kept (a source need not cache; the local-path
	// server's decoded each of them twice).
	cur, prev := map[Hash][]Entry{}, map[Hash][]Entry{}
	tree := func(h Hash) ([]Entry, error) {
		if es, ok := cur[h]; ok {
			return es, nil
		}
		es, ok := prev[h]
		if !ok {
			var err error
			if es, err = src.tree(h); err != nil {
				return nil, err
			}
		}
		cur[h] = es
		return es, nil
	}
	// walk sends tree a and what in it differs from tree b, the one it replaces.
	// A tree met before is walked again: its entries equal to the old tree there
	// were left to that commit's parent, which need not be this commit's.
	var walk func(a, b Hash) error
	walk = func(a, b Hash) error {
		if a == b {
			return nil
		}
		add(a)
		as, err := tree(a)
		if err != nil {
			return err
		}
		bs, err := tree(b)
		if err != nil {
			return err
		}
		// Both lists are in git's order, so one pass pairs each name with
		// its old entry. Out of order (a tree no git wrote), a name may go
		// unpaired: its entry is then sent, which is never wrong.
		for i, j := 0, 0; i < len(as); {
			cmp := -1
			if j < len(bs) {
				cmp = compareEntries(as[i], bs[j])
			}
			if cmp > 0 {
				j++
				continue
			}
			e, had, o := as[i], cmp == 0, Entry{}
			if had {
				o = bs[j]
				j++
			}
			i++
			switch {
			case had && o.Hash == e.Hash:
			case e.Mode == modeDir:
				var ob Hash
				if had && o.IsDir() {
					ob = o.Hash
				}
				if err := walk(e.Hash, ob); err != nil {
					return err
				}
			case e.Mode == modeSubmodule:
			default:
				add(e.Hash)
			}
		}
		return nil
	}
	for _, n := range order {
		if n.flags != fromWant {
			continue
		}
		add(n.c.Hash)
		prev, cur = cur, prev
		clear(cur)
		var base Hash
		if len(n.c.ParentHashes) > 0 {
			if p, ok := nodes[n.c.ParentHashes[0]]; ok {
				base = p.c.TreeHash
			}
		}
		if err := walk(n.c.TreeHash, base); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// objectReader opens object h of type t (or plumbing.AnyObject) as a stream,
// with its type and size.
type objectReader = pack.OpenFunc

// readObject reads object h of type t (or plumbing.AnyObject) whole, through
// the lookup (see look); a blob within r's blob limit, anything else within
// maxStruct.
func (r *Repo) readObject(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, []byte, error) {
	typ, n, err := r.statObject(h)
	if err == nil && t != plumbing.AnyObject && typ != t {
		err = fmt.Errorf("a %s, not a %s: %w", typ, t, plumbing.ErrObjectNotFound)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
	}
	limit := int64(maxStruct)
	if typ == plumbing.BlobObject {
		limit = max(limit, r.maxBlob.get())
	}
	if n > limit {
		return 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typ, h, &SizeError{Object: h, Size: n, Limit: limit})
	}
	typ, data, err := r.readWhole(typ, h, limit)
	if err != nil {
		return 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
	}
	return typ, data, nil
}

// openObject opens object h of type t (or plumbing.AnyObject) as a stream,
// whatever its size (see look).
func (r *Repo) openObject(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	typ, n, rd, err := r.openStream(h)
	if err == nil && t != plumbing.AnyObject && typ != t {
		rd.Close()
		err = fmt.Errorf("a %s, not a %s: %w", typ, t, plumbing.ErrObjectNotFound)
	}
	if err != nil {
		return 0, 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
	}
	return typ, n, rd, nil
}

// typeName names t in errors: "blob", or "object" for plumbing.AnyObject.
func typeName(t plumbing.ObjectType) string {
	if t == plumbing.AnyObject {
		return "object"
	}
	return t.String()
}

// storerReader opens the objects of a repository served in process.
func storerReader(sto storer.EncodedObjectStorer) objectReader {
	return func(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
		o, err := sto.EncodedObject(t, gg(h))
		if err != nil {
			return 0, 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
		}
		rd, err := o.Reader()
		if err != nil {
			return 0, 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
		}
		return o.Type(), o.Size(), rd, nil
	}
}
