package gitlog

import (
	"strconv"

	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Op is what a Change does.
type Op int

// The operations of a change set.
const (
	Put    Op = iota // write Data as a file at Path, creating parent trees
	Delete           // remove the file or subtree at Path
	Move             // move the file or subtree at Path to NewPath
	Link             // put the existing blob or tree Hash at Path (replacing a file or subtree there), creating parent trees
)

// Change is one edit of a change set. Paths are slash-separated, relative to the
// root tree, with no empty, "." or ".." segment; callers validate them.
type Change struct {
	Op      Op
	Path    string
	NewPath string
	Data    []byte
	Hash    Hash // Link: an object already in the repository
}

// rawObject is an encoded git object waiting to be written.
type rawObject = gitobject.Object

func newObject(t plumbing.ObjectType, data []byte) rawObject { return gitobject.New(t, data) }

// mtree is a tree being edited: a copy of its entries plus the subtrees that were
// opened for editing. Only trees on changed paths are ever copied.
type mtree struct {
	entries map[string]Entry
	sub     map[string]*mtree
}

type builder struct {
	r       *Repo
	root    *mtree
	objects []rawObject
	trees   map[Hash][]Entry // the trees written, decoded, for the cache once committed
}

func (b *builder) load(h Hash) (*mtree, error) {
	es, err := b.r.ReadTree(h)
	if err != nil {
		return nil, err
	}
	t := &mtree{entries: make(map[string]Entry, len(es)+1), sub: map[string]*mtree{}}
	for _, e := range es {
		t.entries[e.Name] = e
	}
	return t, nil
}

// dir returns the editable tree at the directory path segs, creating missing
// directories when create is set. It returns nil, nil for a missing directory
// when create is not set.
func (b *builder) dir(segs []string, create bool) (*mtree, error) {
	t := b.root
	for i, name := range segs {
		if s, ok := t.sub[name]; ok {
			t = s
			continue
		}
		e, ok := t.entries[name]
		var s *mtree
		switch {
		case !ok && !create:
			return nil, nil
		case !ok:
			s = &mtree{entries: map[string]Entry{}, sub: map[string]*mtree{}}
			t.entries[name] = Entry{Name: name, Mode: modeDir}
		case !e.IsDir():
			return nil, fmt.Errorf("gitlog: %s: %w", strings.Join(segs[:i+1], "/"), ErrNotDir)
		default:
			var err error
			if s, err = b.load(e.Hash); err != nil {
				return nil, err
			}
		}
		t.sub[name] = s
		t = s
	}
	return t, nil
}

func split(p string) (dir []string, name string) {
	segs := strings.Split(p, "/")
	return segs[:len(segs)-1], segs[len(segs)-1]
}

func (b *builder) put(p string, e Entry, sub *mtree) error {
	dirs, name := split(p)
	t, err := b.dir(dirs, true)
	if err != nil {
		return err
	}
	if old, ok := t.entries[name]; ok && old.IsDir() != e.IsDir() {
		return fmt.Errorf("gitlog: put %s: %w", p, ErrNotDir)
	}
	e.Name = name
	t.entries[name] = e
	delete(t.sub, name)
	if sub != nil {
		t.sub[name] = sub
	}
	return nil
}

// take removes the entry at p and returns it with its editable subtree, if any.
func (b *builder) take(p string) (Entry, *mtree, error) {
	dirs, name := split(p)
	t, err := b.dir(dirs, false)
	if err != nil {
		return Entry{}, nil, err
	}
	if t == nil {
		return Entry{}, nil, fmt.Errorf("gitlog: %s: %w", p, ErrNotFound)
	}
	e, ok := t.entries[name]
	if !ok {
		return Entry{}, nil, fmt.Errorf("gitlog: %s: %w", p, ErrNotFound)
	}
	sub := t.sub[name]
	delete(t.entries, name)
	delete(t.sub, name)
	return e, sub, nil
}

func (b *builder) apply(c Change) error {
	switch c.Op {
	case Put:
		blob := newObject(plumbing.BlobObject, c.Data)
		b.objects = append(b.objects, blob)
		return b.put(c.Path, Entry{Hash: blob.Hash, Mode: modeRegular}, nil)
	case Delete:
		_, _, err := b.take(c.Path)
		return err
	case Move:
		if c.NewPath == c.Path || strings.HasPrefix(c.NewPath, c.Path+"/") {
			return fmt.Errorf("gitlog: move %s into itself", c.Path)
		}
		e, sub, err := b.take(c.Path)
		if err != nil {
			return err
		}
		return b.put(c.NewPath, e, sub)
	case Link:
		e, err := b.r.entryFor(c.Hash)
		if err != nil {
			return fmt.Errorf("gitlog: link %s: %w", c.Path, err)
		}
		if old, ok := b.lookup(c.Path); ok && old.IsDir() != e.IsDir() {
			if _, _, err := b.take(c.Path); err != nil {
				return err
			}
		}
		return b.put(c.Path, e, nil)
	}
	return fmt.Errorf("gitlog: unknown change op %d", c.Op)
}

// write encodes t and its edited subtrees, bottom up, and returns t's hash. Trees
// left empty disappear (git stores no empty directory): ok is false for them.
func (b *builder) write(t *mtree) (h Hash, ok bool, err error) {
	for name, s := range t.sub {
		sh, ok, err := b.write(s)
		if err != nil {
			return ZeroHash, false, err
		}
		if !ok {
			delete(t.entries, name)
			continue
		}
		e := t.entries[name]
		e.Hash = sh
		t.entries[name] = e
	}
	if len(t.entries) == 0 {
		return ZeroHash, false, nil
	}
	data, es := encodeTree(t.entries)
	o := newObject(plumbing.TreeObject, data)
	b.objects = append(b.objects, o)
	if b.trees == nil {
		b.trees = map[Hash][]Entry{}
	}
	b.trees[o.Hash] = es
	return o.Hash, true, nil
}

// lookup returns the entry the tree being built holds at p, if any.
func (b *builder) lookup(p string) (Entry, bool) {
	dirs, name := split(p)
	t, err := b.dir(dirs, false)
	if err != nil || t == nil {
		return Entry{}, false
	}
	e, ok := t.entries[name]
	return e, ok
}

// entryFor returns the entry that links object h: a tree or a regular file. It
// returns an error wrapping ErrNotFound if h is neither in the repository.
func (r *Repo) entryFor(h Hash) (Entry, error) {
	if _, ok := r.trees.get(h); ok {
		return Entry{Hash: h, Mode: modeDir}, nil
	}
	o, err := r.object(plumbing.AnyObject, h)
	if err != nil {
		return Entry{}, fmt.Errorf("object %s: %w", h, ErrNotFound)
	}
	switch o.Type() {
	case plumbing.TreeObject:
		return Entry{Hash: h, Mode: modeDir}, nil
	case plumbing.BlobObject:
		return Entry{Hash: h, Mode: modeRegular}, nil
	}
	return Entry{}, fmt.Errorf("object %s is a %s: %w", h, o.Type(), ErrNotFound)
}

// encodeTree writes entries in git's order: by name, a tree's name compared as if
// it ended in "/". It returns the entries in that order too.
func encodeTree(m map[string]Entry) ([]byte, []Entry) {
	es := make([]Entry, 0, len(m))
	for _, e := range m {
		es = append(es, e)
	}
	key := func(e Entry) string {
		if e.IsDir() {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
	var buf bytes.Buffer
	for _, e := range es {
		mode := strconv.FormatUint(uint64(e.Mode), 8)
		buf.WriteString(mode)
		buf.WriteByte(' ')
		buf.WriteString(e.Name)
		buf.WriteByte(0)
		buf.Write(e.Hash[:])
	}
	return buf.Bytes(), es
}

// BlobHash is the name git gives a blob of data: the hash a Put of data
// commits it under.
func BlobHash(data []byte) Hash { return computeHash(plumbing.BlobObject, data) }

// LinkEntry returns the entry a Link of object h puts in a tree: a tree or a
// regular file. The error wraps ErrNotFound if h is neither in the repository.
func (r *Repo) LinkEntry(h Hash) (Entry, error) { return r.entryFor(h) }
