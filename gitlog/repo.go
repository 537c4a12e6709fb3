// Package gitlog keeps a bare git repository through go-git, knowing nothing of
// encryption: it reads trees and blobs at the main branch, commits a change set
// straight from objects (no index, no worktree), walks history, and serialises
// writers across goroutines and processes.
//
// A commit is acknowledged only once it is durable: its objects and the new value
// of the branch are appended to a journal that is synced to disk before Commit
// returns (see journal.go), so a crash never loses an acknowledged commit. The
// branch's file, which git reads, moves only once the objects it needs are in
// a pack: git can read the repository at every instant.
package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// openPacks is how many pack files a Repo keeps open. Packing keeps a vault at a
// handful of packs (see consolidate).
const openPacks = 32

// Branch is the reference that holds the current state.
const Branch = "refs/heads/main"

// stateDir is the folder inside the repository for local state that never syncs.
const stateDir = "memvault"

// Repo is an open bare repository. Its methods are safe for concurrent use.
type Repo struct {
	dir     string
	st      *filesystem.Storage
	trees   *treeCache
	packs   *pack.Set          // every packed object is read through it, see look
	commits *objCache[*Commit] // decoded commits: a walk reads each twice, as child and as parent
	index   *historyIndex
	maxBlob blobLimit // see SetBlobLimit

	readMu   sync.Mutex    // guards go-git's storage, left for refs, config, prefixes and Repair (see look)
	mu       ctxMutex      // serialises writers inside this process; lockFile does across processes
	lockFile *os.File      // flocked by Lock; nil in a read-only repository without one
	readOnly bool          // the repository cannot be written: Lock fails
	journal  *journal.File // appended to by commits, under mu
	disk     *disk.Disk    // every change to the repository's files goes through it
	jobjs    journal.Index
	now      func() time.Time // the reflog's clock, see SetClock
	reflog   reflogFile       // open for appending, under mu

	flushTimer *time.Timer // flushes the journal after a pause in writing, see armIdleFlush
	closed     bool        // under bgMu

	autoPack   int            // gc.auto: see maybeAutoPack
	mergeAbove int            // Close merges packs only past this many; 0: as geometricSplit finds
	packing    atomic.Bool    // a background pack of loose objects runs
	merging    atomic.Bool    // a background merge of packs runs
	background sync.WaitGroup // the background pack and indexing, waited for by Close
	bgMu       sync.Mutex
	stopIndex  context.CancelFunc // stops the background indexing
}

// Init creates a bare repository at dir whose HEAD names Branch. It fails with an
// error wrapping fs.ErrExist if dir already holds a repository, and refuses a
// directory that holds anything else.
func Init(dir string) (*Repo, error) { return initOn(disk.OS, dir) }

func initOn(d *disk.Disk, dir string) (*Repo, error) {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil, fmt.Errorf("gitlog: init %s: %w", dir, os.ErrExist)
	}
	if names, err := os.ReadDir(dir); err == nil && len(names) > 0 {
		return nil, fmt.Errorf("gitlog: init %s: the directory is not empty and holds no repository", dir)
	}
	for _, sub := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", stateDir} {
		if err := d.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("gitlog: init: %w", err)
		}
	}
	files := map[string]string{
		"config":      "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n",
		"description": "memvault: encrypted agent memory\n",
		"HEAD":        "ref: " + string(Branch) + "\n",
	}
	for name, content := range files {
		if err := d.WriteFileAtomic(filepath.Join(dir, name), []byte(content), 0o644, true); err != nil {
			return nil, fmt.Errorf("gitlog: init: %w", err)
		}
	}
	if err := d.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("gitlog: init: %w", err)
	}
	return openOn(d, dir)
}

// Open opens the bare repository at dir. It returns an error wrapping ErrNotRepo
// when dir holds none. If an earlier writer was cut off by a machine crash, Open
// completes its journaled commits first.
func Open(dir string) (*Repo, error) { return openOn(disk.OS, dir) }

func openOn(d *disk.Disk, dir string) (*Repo, error) {
	if fi, err := os.Stat(filepath.Join(dir, "objects")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("gitlog: open %s: %w", dir, ErrNotRepo)
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return nil, fmt.Errorf("gitlog: open %s: %w", dir, ErrNotRepo)
	}
	readOnly := false
	if err := d.MkdirAll(filepath.Join(dir, stateDir), 0o700); isReadOnly(err) {
		readOnly = true
	} else if err != nil {
		return nil, fmt.Errorf("gitlog: open: %w", err)
	}
	lockPath := filepath.Join(dir, stateDir, "lock")
	lf, err := d.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if isReadOnly(err) {
		// A backup or a read-only mount: readable, never written. The lock
		// file, if there is one, still serialises this process's readers'
		// replay against nothing; writers get ErrReadOnly from Lock.
		readOnly = true
		lf, err = os.Open(lockPath)
		if errors.Is(err, fs.ErrNotExist) {
			lf, err = nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gitlog: open: %w", err)
	}
	// go-git's storage reads refs and config, lists hashes by prefix and
	// walks every commit for Repair; no object is read through it (see look).
	// Where it reads packs it keeps up to openPacks open (billy resolves each
	// path component with lstat).
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(8*cache.MiByte), filesystem.Options{MaxOpenDescriptors: openPacks, LargeObjectThreshold: largeObject})
	r := &Repo{dir: dir, st: st, trees: newTreeCache(4096), packs: pack.NewSet(dir), commits: newObjCache[*Commit](1024), index: newHistoryIndex(d, filepath.Join(dir, stateDir, indexName)), lockFile: lf, readOnly: readOnly, mu: make(ctxMutex, 1), disk: d, journal: journal.Open(d, filepath.Join(dir, stateDir, journal.Name))}
	r.autoPack = r.autoPackLimit()
	if err := r.recoverAtOpen(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// isReadOnly tells whether err says a file cannot be written here.
func isReadOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// Dir is the repository's directory.
func (r *Repo) Dir() string { return r.dir }

// StateDir is the folder for local state that must not sync (lock, caches).
func (r *Repo) StateDir() string { return filepath.Join(r.dir, stateDir) }

// Close releases the repository's open files.
//
// A writable repository's journal is flushed first (see flushJournal), so plain
// git finds every object once memvault is closed; if another process holds the
// writer lock, that process flushes it instead.
func (r *Repo) Close() error {
	r.stopBackground()
	if !r.readOnly {
		// The wait for the lock is bounded, the flush is not: cut off, it
		// would leave plain git without the newest objects.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		unlock, err := r.lock(ctx)
		cancel()
		if err == nil {
			r.flushJournal(context.Background(), false) // best effort: the journal keeps what it holds
			unlock()
		}
		// A short-lived process (memvault tool) adds a pack each time: merge
		// them as they accumulate, unless another process is merging.
		if r.autoPack > 0 && r.packsOver(r.mergeAbove) {
			if unlock, ok, _ := r.packLock(context.Background(), "pack-merge.lock", false); ok {
				r.consolidate(context.Background())
				unlock()
			}
		}
	}
	return r.closeFiles()
}

// stopBackground stops the indexing and the wait for a pause in writing, and
// waits for a running pack.
func (r *Repo) stopBackground() {
	r.bgMu.Lock()
	r.closed = true
	if r.stopIndex != nil {
		r.stopIndex()
	}
	if r.flushTimer != nil {
		r.flushTimer.Stop()
	}
	r.bgMu.Unlock()
	r.background.Wait()
}

// closeFiles closes the repository's open files.
//
// A Lock whose context ended keeps this process's mutex, and its wait keeps
// the lock file, until another process lets the lock go (see
// lockFileContext): Close does not wait for that past a second. It then
// closes every file but the lock file, which that wait still uses; the lock
// file stays open until the process ends.
func (r *Repo) closeFiles() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	held := r.mu.lockContext(ctx) == nil
	cancel()
	if held {
		defer r.mu.Unlock()
	}
	r.journal.Close()
	r.closeRefLog()
	if r.lockFile != nil && held {
		r.lockFile.Close()
	}
	r.index.close()
	r.jobjs.Close()
	r.packs.Close()
	return r.st.Close()
}

// Head returns the commit Branch points at, or ZeroHash before the first commit.
func (r *Repo) Head() (Hash, error) { return r.Ref(Branch) }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ReadCommit reads the commit h.
func (r *Repo) ReadCommit(h Hash) (*Commit, error) {
	c, err := r.readCommit(h)
	if err != nil {
		return nil, err
	}
	return c.clone(), nil
}

// readCommit decodes the commit h, for gitlog's own walks. What it returns is
// the cache's: read it, never change it.
func (r *Repo) readCommit(h Hash) (c *Commit, err error) {
	if c, ok := r.commits.get(h); ok {
		return c, nil
	}
	data, err := r.commitBytes(h)
	if err != nil {
		return nil, err
	}
	c, err = decodeCommit(h, data)
	if err != nil {
		return nil, fmt.Errorf("gitlog: decode commit %s: %w", h, err)
	}
	r.commits.put(h, c)
	return c, nil
}

// commitBytes returns the content of commit h: from the pack reader, whose
// cache it may be (read it, never change it), or else through the lookup.
func (r *Repo) commitBytes(h Hash) ([]byte, error) {
	if data, ok := r.packed(h, plumbing.CommitObject); ok {
		return data, nil
	}
	_, data, err := r.readWhole(plumbing.CommitObject, h, maxStruct)
	if err != nil {
		return nil, fmt.Errorf("gitlog: read commit %s: %w", h, err)
	}
	return data, nil
}

// RootTree returns the tree hash of commit h, or ZeroHash for ZeroHash.
func (r *Repo) RootTree(h Hash) (Hash, error) {
	if h.IsZero() {
		return ZeroHash, nil
	}
	c, err := r.readCommit(h)
	if err != nil {
		return ZeroHash, err
	}
	return c.TreeHash, nil
}

// ReadBlob returns the content of blob h. A blob larger than the limit
// SetBlobLimit set is refused, before anything of it is inflated, with an error
// wrapping ErrTooLarge (a *SizeError); an object that is no blob, with one
// wrapping ErrWrongType.
func (r *Repo) ReadBlob(h Hash) ([]byte, error) {
	_, data, err := r.readWhole(plumbing.BlobObject, h, r.maxBlob.get())
	if err != nil {
		return nil, fmt.Errorf("gitlog: read blob %s: %w", h, err)
	}
	return data, nil
}

// Entry is what a tree holds at a path.
type Entry struct {
	Name string
	Hash Hash
	Mode uint32 // as git records it: 0o040000 a tree, 0o100644 a file, 0o100755 an executable, 0o120000 a symlink, 0o160000 a submodule
}

// IsDir tells whether the entry is a tree.
func (e Entry) IsDir() bool { return e.Mode == modeDir }

// ReadTree returns the entries of tree h in git order. The slice is shared: do not
// modify it. The zero hash reads as an empty tree.
func (r *Repo) ReadTree(h Hash) ([]Entry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if es, ok := r.trees.get(h); ok {
		return es, nil
	}
	es, ok := []Entry(nil), false
	if data, found := r.packed(h, plumbing.TreeObject); found {
		es, ok = parseTree(data)
	}
	if !ok {
		var err error
		if es, err = r.lookTree(h); err != nil {
			return nil, err
		}
	}
	r.trees.put(h, es)
	return es, nil
}

// packed reads commit or tree h straight from its pack (see pack.Set); false
// leaves it to the lookup (see look), which also looks in the journal, where
// a commit just written is, and says why a read failed.
func (r *Repo) packed(h Hash, t plumbing.ObjectType) ([]byte, bool) {
	if _, ok := r.jobjs.Get(h); ok {
		return nil, false
	}
	return r.packs.Read(h, t, maxStruct)
}

// lookTree reads tree h through the lookup (see look), and decodes it as
// go-git does what parseTree leaves.
func (r *Repo) lookTree(h Hash) ([]Entry, error) {
	_, data, err := r.readWhole(plumbing.TreeObject, h, maxStruct)
	if err != nil {
		return nil, fmt.Errorf("gitlog: read tree %s: %w", h, err)
	}
	if es, ok := parseTree(data); ok {
		return es, nil
	}
	var t object.Tree
	if err := t.Decode(memoryObject(rawObject{Type: plumbing.TreeObject, Hash: h, Data: data})); err != nil {
		return nil, fmt.Errorf("gitlog: decode tree %s: %w", h, err)
	}
	es := make([]Entry, len(t.Entries))
	for i, te := range t.Entries {
		es[i] = entryOf(te)
	}
	return es, nil
}

// Lookup finds the entry at slash-separated path p in tree root. The empty path is
// the root tree itself. It returns an error wrapping ErrNotFound when nothing is
// there, and ErrNotDir when p descends through a file.
func (r *Repo) Lookup(root Hash, p string) (Entry, error) {
	e := Entry{Hash: root, Mode: modeDir}
	if p == "" {
		return e, nil
	}
	for _, name := range strings.Split(p, "/") {
		if !e.IsDir() {
			return Entry{}, fmt.Errorf("gitlog: lookup %s: %w", p, ErrNotDir)
		}
		es, err := r.ReadTree(e.Hash)
		if err != nil {
			return Entry{}, err
		}
		found := false
		for _, c := range es {
			if c.Name == name {
				e, found = c, true
				break
			}
		}
		if !found {
			return Entry{}, fmt.Errorf("gitlog: lookup %s: %w", p, ErrNotFound)
		}
	}
	return e, nil
}

func readAll(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	buf := make([]byte, o.Size())
	if _, err := io.ReadFull(rd, buf); err != nil {
		return nil, fmt.Errorf("gitlog: read object %s: %w", o.Hash(), err)
	}
	return buf, nil
}
