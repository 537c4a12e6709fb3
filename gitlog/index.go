package gitlog

// The history index makes a path's history fast on long histories.
//
// Walking a path's history compares the path's entry in each commit's tree with
// its first parent's. Reading two commits and the trees down the path costs tens
// of microseconds a commit from go-git's storage, too much for 100,000 commits.
// So the index keeps, for each commit, its parents and the paths where its tree
// differs from its first parent's, as the top-most differing entries: a file
// added, deleted or changed, or a directory added or deleted as a whole. A walk
// then reads only the commits that touch the path.
//
// A commit made here is indexed as it is made (its trees are in the cache then);
// one that came from elsewhere is indexed the first time a walk meets it. The
// index is derived from immutable objects, so it never goes stale, and it is only
// a cache: it lives in memvault/history-index, is appended to without syncing by
// any process, and a damaged record is skipped (and recomputed when needed).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/record"
)

const (
	indexName   = "history-index"
	maxIndexOps = 256 // more changed paths than this: the record says "anything"
	tagIndex    = "MVHI"
)

// indexFormat is the history index as a record file: a record (MVHI) is one
// commit's node (see encodeIndexRecord). Version 0 had no header; its records
// are the same. Damage, and records of kinds this build does not know, are
// stepped over: the index is a cache, and is only ever appended to.
var indexFormat = record.Format{
	Kind:       "history-index",
	Version:    1,
	Fields:     map[int][]string{0: nil, 1: nil},
	Tags:       []string{tagIndex},
	Headless:   true,
	SkipDamage: true,
}

var errTooMany = errors.New("too many changes")

// ixNode is what the index knows of one commit.
type ixNode struct {
	parents []Hash
	ops     []string // top-most changed tree paths, in git order
	coarse  bool     // over maxIndexOps changes: any path may have changed
}

// touches tells whether the commit changed the entry at tree path p ("" is the
// root). sure is false when it may have: p lies under a path added or deleted as
// a whole (p itself may never have existed), or the record is coarse.
func (n *ixNode) touches(p string) (hit, sure bool) {
	if n.coarse {
		return true, false
	}
	maybe := false
	for _, o := range n.ops {
		switch {
		case p == "" || o == p || under(o, p):
			return true, true
		case under(p, o):
			maybe = true
		}
	}
	return maybe, !maybe
}

// under tells whether tree path p lies below dir: strings.HasPrefix(p, dir+"/")
// with no string built, as a walk asks it of every commit's changes.
func under(p, dir string) bool {
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

type historyIndex struct {
	disk *disk.Disk
	path string

	mu      sync.Mutex
	loaded  bool
	nodes   map[Hash]*ixNode
	names   map[string]string // interned paths
	pending []byte            // records computed but not yet appended

	fmu sync.Mutex // serialises appends to f
	f   *os.File   // the index file, open for appending once something was written
}

func newHistoryIndex(d *disk.Disk, path string) *historyIndex {
	return &historyIndex{disk: d, path: path}
}

// load reads the index file once. A missing or unreadable file is an empty index.
func (ix *historyIndex) load() {
	if ix.loaded {
		return
	}
	ix.loaded = true
	data, _ := os.ReadFile(ix.path)
	ix.parse(data)
}

// parse takes the nodes of the index file data.
func (ix *historyIndex) parse(data []byte) {
	ix.nodes = make(map[Hash]*ixNode, len(data)/64) // a record of one changed path is about 80 bytes
	ix.names = map[string]string{}
	var a nodeAlloc
	file, _ := indexFormat.Parse(data)
	for _, rec := range file.Records {
		ix.decode(&a, rec.Body)
	}
}

// nodeAlloc hands out nodes and parent lists from larger blocks: loading an index
// of 100,000 commits then costs a few hundred allocations, not 200,000.
type nodeAlloc struct {
	nodes   []ixNode
	parents []Hash
	ops     []string
}

func (a *nodeAlloc) strings(n int) []string {
	if len(a.ops) < n {
		a.ops = make([]string, max(n, 4096))
	}
	s := a.ops[:0:n]
	a.ops = a.ops[n:]
	return s
}

func (a *nodeAlloc) node(np int) *ixNode {
	if len(a.nodes) == 0 {
		a.nodes = make([]ixNode, 1024)
	}
	if len(a.parents) < np {
		a.parents = make([]Hash, max(np, 4096))
	}
	n := &a.nodes[0]
	a.nodes = a.nodes[1:]
	n.parents, a.parents = a.parents[:np:np], a.parents[np:]
	return n
}

func (ix *historyIndex) decode(a *nodeAlloc, p []byte) {
	if len(p) < 22 {
		return
	}
	var h Hash
	copy(h[:], p)
	np := int(p[20])
	p = p[21:]
	if len(p) < np*20+3 {
		return
	}
	n := a.node(np)
	for i := range n.parents {
		copy(n.parents[i][:], p[i*20:])
	}
	p = p[np*20:]
	n.coarse = p[0]&1 != 0
	nops := int(binary.BigEndian.Uint16(p[1:]))
	p = p[3:]
	if nops > 0 {
		n.ops = a.strings(nops)
	}
	for range nops {
		if len(p) < 2 || len(p) < 2+int(binary.BigEndian.Uint16(p)) {
			return
		}
		l := int(binary.BigEndian.Uint16(p))
		n.ops = append(n.ops, ix.intern(p[2:2+l]))
		p = p[2+l:]
	}
	ix.nodes[h] = n
}

func (ix *historyIndex) intern(b []byte) string {
	if s, ok := ix.names[string(b)]; ok {
		return s
	}
	s := string(b)
	ix.names[s] = s
	return s
}

func encodeIndexRecord(h Hash, n *ixNode) []byte {
	var p bytes.Buffer
	p.Write(h[:])
	p.WriteByte(byte(len(n.parents)))
	for _, ph := range n.parents {
		p.Write(ph[:])
	}
	var flags byte
	if n.coarse {
		flags = 1
	}
	p.WriteByte(flags)
	binary.Write(&p, binary.BigEndian, uint16(len(n.ops)))
	for _, o := range n.ops {
		binary.Write(&p, binary.BigEndian, uint16(len(o)))
		p.WriteString(o)
	}
	return record.Frame(make([]byte, 0, record.FrameLen(p.Len())), tagIndex, p.Bytes())
}

// add indexes commit h, just made, of tree with parents, where base is the first
// parent's tree. It is best effort: the walk that needs h indexes it if this fails.
func (ix *historyIndex) add(r *Repo, h, tree, base Hash, parents []Hash) {
	if len(parents) > 255 {
		return
	}
	n, err := r.nodeFrom(base, tree, parents)
	if err != nil {
		return
	}
	ix.mu.Lock()
	if ix.loaded {
		ix.nodes[h] = n
	}
	ix.pending = append(ix.pending, encodeIndexRecord(h, n)...)
	ix.mu.Unlock()
	ix.flush()
}

// node returns the index's record of commit h, computing it if the index has none.
func (ix *historyIndex) node(r *Repo, h Hash) (*ixNode, error) {
	ix.mu.Lock()
	ix.load()
	n, ok := ix.nodes[h]
	ix.mu.Unlock()
	if ok {
		return n, nil
	}
	c, err := r.readCommit(h)
	if err != nil {
		return nil, err
	}
	parents := c.ParentHashes
	var base Hash
	if len(parents) > 0 {
		if base, err = r.RootTree(parents[0]); err != nil {
			return nil, err
		}
	}
	if n, err = r.nodeFrom(base, c.TreeHash, parents); err != nil {
		return nil, err
	}
	ix.mu.Lock()
	ix.nodes[h] = n
	if len(parents) <= 255 {
		ix.pending = append(ix.pending, encodeIndexRecord(h, n)...)
	}
	ix.mu.Unlock()
	return n, nil
}

// parents returns the parents of commit h when the index holds it, loading
// the index first if need be.
func (ix *historyIndex) parents(h Hash) ([]Hash, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.load()
	n, ok := ix.nodes[h]
	if !ok {
		return nil, false
	}
	return n.parents, true
}

// flush appends the pending records to the index file in one write, so records
// from several processes never interleave. Failures only lose cache entries.
func (ix *historyIndex) flush() {
	ix.mu.Lock()
	buf := ix.pending
	ix.pending = nil
	ix.mu.Unlock()
	if len(buf) == 0 {
		return
	}
	ix.fmu.Lock()
	defer ix.fmu.Unlock()
	if ix.f == nil {
		// The process that makes the file writes its header; the others
		// append. Should the header be cut short, the records after it are
		// still found.
		f, err := ix.disk.OpenFile(ix.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			buf = append(indexFormat.Encode(), buf...)
		} else {
			f, err = ix.disk.OpenFile(ix.path, os.O_WRONLY|os.O_APPEND, 0o600)
		}
		if err != nil {
			return
		}
		ix.f = f
	}
	ix.disk.Write(ix.f, buf)
}

// close releases the index file.
func (ix *historyIndex) close() {
	ix.fmu.Lock()
	defer ix.fmu.Unlock()
	if ix.f != nil {
		ix.f.Close()
		ix.f = nil
	}
}

// nodeFrom diffs tree against base, its first parent's tree.
func (r *Repo) nodeFrom(base, tree Hash, parents []Hash) (*ixNode, error) {
	n := &ixNode{parents: append([]Hash(nil), parents...)}
	err := r.topChanges(base, tree, "", &n.ops)
	if errors.Is(err, errTooMany) {
		n.ops, n.coarse = nil, true
		err = nil
	}
	return n, err
}

// topChanges appends to ops the top-most paths where trees a and b differ.
func (r *Repo) topChanges(a, b Hash, prefix string, ops *[]string) error {
	return r.diffLevel(a, b, func(name string, ea, eb *Entry) error {
		p := joinPath(prefix, name)
		if ea != nil && eb != nil && ea.IsDir() && eb.IsDir() {
			return r.topChanges(ea.Hash, eb.Hash, p, ops)
		}
		if k := len(*ops); k > 0 && (*ops)[k-1] == p {
			return nil // a file and a directory of the same name
		}
		if *ops = append(*ops, p); len(*ops) > maxIndexOps {
			return errTooMany
		}
		return nil
	})
}

// IndexHistory completes the history index for every commit reachable from
// from, so that later path walks read only the commits they show. Commits made
// through Commit are indexed as they are made: this is for history that came
// from elsewhere (a fetch, a clone, objects packed by other tools), which a path
// walk would otherwise index on its way. It returns ctx's error if ctx ends first;
// what was indexed by then is kept.
func (r *Repo) IndexHistory(ctx context.Context, from Hash) error {
	defer r.index.flush()
	stack := []Hash{from}
	seen := map[Hash]bool{ZeroHash: true}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		n, err := r.index.node(r, h)
		if err != nil {
			return fmt.Errorf("gitlog: index history: %w", err)
		}
		stack = append(stack, n.parents...)
		if len(seen)%10000 == 0 {
			r.index.flush()
		}
	}
	return nil
}

// IndexInBackground completes the history index from from in a goroutine of
// its own, as IndexHistory does, so that a long-lived process (an MCP server,
// the UI) answers its first path history at once on a history that came from
// elsewhere. A second call replaces the first; Close stops it, keeping what it
// indexed. Path walks meanwhile index what they meet themselves.
func (r *Repo) IndexInBackground(from Hash) {
	if from.IsZero() {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.bgMu.Lock()
	if r.stopIndex != nil {
		r.stopIndex()
	}
	r.stopIndex = cancel
	r.bgMu.Unlock()
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		r.IndexHistory(ctx, from) // best effort: a walk indexes what is left
	}()
}
