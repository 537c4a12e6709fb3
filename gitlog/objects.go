package gitlog

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// objectSource reads the commits and trees missingObjects walks: a Repo, through
// its caches and read lock, or a repository served in process (file://).
type objectSource interface {
	commit(h Hash) (*object.Commit, error) // wraps ErrNotFound when h is not there
	tree(h Hash) ([]Entry, error)
}

type repoSource struct{ r *Repo }

func (s repoSource) commit(h Hash) (*object.Commit, error) { return s.r.readCommit(h) }
func (s repoSource) tree(h Hash) ([]Entry, error)          { return s.r.ReadTree(h) }

type storerSource struct{ sto storer.EncodedObjectStorer }

func (s storerSource) commit(h Hash) (*object.Commit, error) {
	c, err := object.GetCommit(s.sto, gg(h))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("gitlog: commit %s: %w", h, ErrNotFound)
	}
	return c, err
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
	c      *object.Commit
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
			if err := mark(fromGG(p), n.flags); err != nil {
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
		old := make(map[string]Entry, len(bs))
		for _, e := range bs {
			old[e.Name] = e
		}
		for _, e := range as {
			o, had := old[e.Name]
			switch {
			case had && o.Hash == e.Hash:
			case e.Mode == ModeDir:
				var ob Hash
				if had && o.IsDir() {
					ob = o.Hash
				}
				if err := walk(e.Hash, ob); err != nil {
					return err
				}
			case e.Mode == ModeSubmodule:
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
		add(fromGG(n.c.Hash))
		prev, cur = cur, prev
		clear(cur)
		var base Hash
		if len(n.c.ParentHashes) > 0 {
			if p, ok := nodes[fromGG(n.c.ParentHashes[0])]; ok {
				base = fromGG(p.c.TreeHash)
			}
		}
		if err := walk(fromGG(n.c.TreeHash), base); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// objectReader opens object h of type t (or plumbing.AnyObject) as a stream,
// with its type and size.
type objectReader func(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error)

// readObject reads object h of type t (or plumbing.AnyObject) whole, through
// r's caches and read lock; a blob within r's blob limit, anything else within
// maxStruct.
func (r *Repo) readObject(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, []byte, error) {
	o, err := r.object(t, h)
	if err != nil {
		return 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
	}
	limit := int64(maxStruct)
	if o.Type() == plumbing.BlobObject {
		limit = max(limit, r.maxBlob.get())
	}
	r.readMu.Lock()
	defer r.readMu.Unlock()
	data, err := readAllMax(o, limit)
	return o.Type(), data, err
}

// openObject opens object h of type t (or plumbing.AnyObject) as a stream,
// whatever its size: each read of the stream takes r's read lock.
func (r *Repo) openObject(t plumbing.ObjectType, h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	o, err := r.object(t, h)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
	}
	r.readMu.Lock()
	defer r.readMu.Unlock()
	rd, err := o.Reader()
	if err != nil {
		return 0, 0, nil, fmt.Errorf("gitlog: read %s %s: %w", typeName(t), h, err)
	}
	return o.Type(), o.Size(), lockedReader{rd, &r.readMu}, nil
}

// lockedReader reads under a lock.
type lockedReader struct {
	rd io.ReadCloser
	mu *sync.Mutex
}

func (l lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rd.Read(p)
}

func (l lockedReader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rd.Close()
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

// writePack writes the objects hs to w as one pack (see packBuilder). A pack
// of a whole vault costs a buffer, whatever it holds: a history may hold a
// blob of a gigabyte that a megabyte of zlib inflates to. Objects that reuse
// finds packed are copied as stored (see packReuse), the rest read through
// read and compressed; reuse may be nil. A delta comes after its base, as
// git writes them.
func writePack(w io.Writer, hs []Hash, read objectReader, reuse *packReuse) error {
	b := newPackEncoder(w, len(hs))
	waiting := map[Hash][]reusable{} // deltas copied once their base is written
	whole := func(h Hash) error {
		t, size, rd, err := read(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		err = b.stream(h, t, size, rd)
		rd.Close()
		if err != nil {
			return fmt.Errorf("gitlog: pack %w", err)
		}
		return nil
	}
	// written takes the deltas waiting for h, and theirs, in turn.
	written := func(h Hash) error {
		todo := []Hash{h}
		for len(todo) > 0 {
			base := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for _, d := range waiting[base] {
				if err := d.copyTo(b, d.e.hash); err != nil {
					return fmt.Errorf("gitlog: pack %w", err)
				}
				todo = append(todo, d.e.hash)
			}
			delete(waiting, base)
		}
		return nil
	}
	queued := map[Hash]bool{}
	for _, h := range hs {
		if b.seen[h] || queued[h] {
			continue
		}
		var err error
		r, ok := reusable{}, false
		if reuse != nil {
			r, ok = reuse.entry(h)
		}
		switch {
		case ok && r.delta && !b.seen[r.base]:
			waiting[r.base] = append(waiting[r.base], r)
			queued[h] = true
			continue
		case ok:
			if err = r.copyTo(b, h); err != nil {
				err = fmt.Errorf("gitlog: pack %w", err)
			}
		default:
			err = whole(h)
		}
		if err == nil {
			err = written(h)
		}
		if err != nil {
			return err
		}
	}
	for len(waiting) > 0 {
		// A base that was never written (reuse lists only objects of hs, so
		// none should be): its deltas go whole.
		for base, ds := range waiting {
			delete(waiting, base)
			for _, d := range ds {
				err := whole(d.e.hash)
				if err == nil {
					err = written(d.e.hash)
				}
				if err != nil {
					return err
				}
			}
			break
		}
	}
	_, err := b.trailer()
	return err
}
