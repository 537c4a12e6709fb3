//go:build linux

package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memvault/memvault/vault"
)

// FS is a vault mounted as a folder.
type FS struct {
	v     *vault.Vault
	opts  Options
	dir   string
	srv   *fuse.Server
	stop  context.CancelFunc
	done  chan struct{} // closed when the watcher and the reaper are gone
	start time.Time
	uid   uint32
	gid   uint32

	// mu guards everything below, and runs commits one at a time, so that what
	// the kernel is told always matches the state a commit left.
	mu    sync.Mutex
	snap  *vault.Snapshot
	lists map[string]map[string]vault.Entry // listings of snap, by directory
	files map[string]*memFile               // files held in memory, by memory path
	dirs  map[string]bool                   // empty directories, in memory only
	gone  map[string]tombstone              // files renamed to a scratch name
}

// memFile is a file held in memory: a scratch file, or a file open for writing,
// whose content is committed when it is closed.
type memFile struct {
	path    string
	data    []byte
	dirty   bool // changed since the last commit
	wrote   bool // written to (write(2)) since the last commit
	scratch bool // never committed
	refused bool // its content was refused by the screen, and not written to since
	opens   int
	removed bool // unlinked or replaced while open
	mtime   time.Time
}

// tombstone is a vault file renamed to a scratch name (an editor's backup). It
// looks deleted; its deletion is committed after Options.DeleteDelay, unless a
// new file is written at its path first, which is then one commit.
type tombstone struct {
	at    time.Time
	agent string
}

// Start mounts v on dir, an existing empty folder, and serves it until Close,
// an unmount (Unmount, fusermount3 -u, umount) or the end of ctx. Wait waits
// for the end. Only the user who mounts it can enter the folder.
func Start(ctx context.Context, v *vault.Vault, dir string, opts Options) (*FS, error) {
	if opts.Agent == "" {
		opts.Agent = "mount"
	}
	if opts.DeleteDelay <= 0 {
		opts.DeleteDelay = time.Second
	}
	f := &FS{v: v, opts: opts, dir: dir, start: time.Now(), done: make(chan struct{}),
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid()),
		files: map[string]*memFile{}, dirs: map[string]bool{}, gone: map[string]tombstone{}}
	if err := f.refresh(ctx); err != nil {
		return nil, err
	}
	// The kernel caches no entry, attribute or page of a file: every stat asks
	// this process, which answers from the vault's newest state, so a change
	// from sync or another process shows at once, and no plaintext sits in the
	// page cache (files are opened with direct I/O below).
	zero := time.Duration(0)
	mopts := &fs.Options{
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
		UID: f.uid, GID: f.gid,
		MountOptions: fuse.MountOptions{
			FsName: "memvault", Name: "memvault",
			// Root mounts with mount(2) itself; anyone else through fusermount3.
			DirectMount:   true,
			DisableXAttrs: true,
			// No allow_other: the kernel lets only this user in; and it checks
			// the modes (0700, 0600) itself.
			Options: []string{"default_permissions"},
		},
	}
	srv, err := fs.Mount(dir, &node{f: f}, mopts)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w%s", dir, err, helperHint(err))
	}
	f.srv = srv
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	f.stop = stop
	go f.background(wctx)
	go func() {
		select {
		case <-ctx.Done():
			_ = f.Close()
		case <-wctx.Done():
		}
	}()
	return f, nil
}

// helperHint says what to install when mounting needed the helper and it is missing.
func helperHint(err error) string {
	if os.Geteuid() == 0 {
		return ""
	}
	if _, lerr := exec.LookPath("fusermount3"); lerr != nil {
		if _, lerr := exec.LookPath("fusermount"); lerr != nil {
			return " (mounting as a user needs fusermount3: install the fuse3 package)"
		}
	}
	return ""
}

// Dir is the folder the vault is mounted on.
func (f *FS) Dir() string { return f.dir }

// Wait waits until the folder is unmounted, then commits the deletions still
// pending (files an editor renamed to a backup name and did not write again).
func (f *FS) Wait() error {
	f.srv.Wait()
	f.stop()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reap(context.Background(), true)
}

// Close unmounts the folder; Wait then returns.
func (f *FS) Close() error {
	err := f.srv.Unmount()
	if err != nil && !isNotMounted(err) {
		return fmt.Errorf("unmount %s: %w", f.dir, err)
	}
	return nil
}

func isNotMounted(err error) bool {
	return errors.Is(err, syscall.EINVAL) || strings.Contains(err.Error(), "not mounted")
}

// Unmount unmounts the vault mounted on dir by another process, which then
// ends. Root unmounts directly; others through fusermount3 (or fusermount).
func Unmount(dir string) error {
	err := syscall.Unmount(dir, 0)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EPERM) {
		for _, helper := range []string{"fusermount3", "fusermount"} {
			if p, lerr := exec.LookPath(helper); lerr == nil {
				out, herr := exec.Command(p, "-u", dir).CombinedOutput()
				if herr != nil {
					return fmt.Errorf("unmount %s: %s: %s", dir, helper, strings.TrimSpace(string(out)))
				}
				return nil
			}
		}
	}
	return fmt.Errorf("unmount %s: %w", dir, err)
}

// background follows the vault's branch, so the folder shows what sync and
// other processes commit, and commits the deletions whose delay ran out.
func (f *FS) background(ctx context.Context) {
	defer close(f.done)
	changed, err := f.v.Watch(ctx)
	if err != nil {
		// No watching here: poll.
		changed = nil
	}
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	reap := time.NewTicker(f.opts.DeleteDelay / 4)
	defer reap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changed:
			if !ok {
				return
			}
			f.mu.Lock()
			_ = f.refresh(ctx)
			f.mu.Unlock()
		case <-poll.C:
			if changed == nil {
				f.mu.Lock()
				_ = f.refresh(ctx)
				f.mu.Unlock()
			}
		case <-reap.C:
			f.mu.Lock()
			_ = f.reap(ctx, false)
			f.mu.Unlock()
		}
	}
}

// refresh takes the vault's newest state. f.mu is held.
func (f *FS) refresh(ctx context.Context) error {
	snap, err := f.v.Snapshot(ctx)
	if err != nil {
		return err
	}
	if f.snap == nil || snap.Commit() != f.snap.Commit() {
		f.snap, f.lists = snap, map[string]map[string]vault.Entry{}
	}
	return nil
}

// reap commits the deletion of each tombstone older than the delay, or of
// all with now. f.mu is held.
func (f *FS) reap(ctx context.Context, now bool) error {
	var first error
	for p, t := range f.gone {
		if !now && time.Since(t.at) < f.opts.DeleteDelay {
			continue
		}
		delete(f.gone, p)
		if mf := f.files[p]; mf != nil && !mf.scratch {
			continue // a new file is being written there: its close commits it
		}
		err := f.v.Update(ctx, vault.Meta{Command: "delete", Agent: t.agent}, func(tx *vault.Tx) error {
			err := tx.Remove(p)
			if errors.Is(err, vault.ErrNotExist) {
				return nil
			}
			return err
		})
		if err != nil && first == nil {
			first = err
		}
		f.keepParents(ctx, p)
	}
	return first
}

// list returns the vault's entries of directory p, by name. f.mu is held.
func (f *FS) list(ctx context.Context, p string) map[string]vault.Entry {
	if m, ok := f.lists[p]; ok {
		return m
	}
	es, err := f.snap.List(ctx, p)
	if err != nil {
		return nil
	}
	m := make(map[string]vault.Entry, len(es))
	for _, e := range es {
		m[e.Name] = e
	}
	f.lists[p] = m
	return m
}

// inVault tells what the vault holds at p, tombstones aside. f.mu is held.
func (f *FS) inVault(ctx context.Context, p string) (vault.Kind, int64) {
	if p == vault.Root {
		return vault.KindDir, 0
	}
	e, ok := f.list(ctx, path.Dir(p))[path.Base(p)]
	switch {
	case !ok, e.Err != nil:
		return vault.KindNone, 0
	case e.Dir:
		return vault.KindDir, 0
	}
	return vault.KindFile, e.Size
}

// stat tells what the folder shows at p. f.mu is held.
func (f *FS) stat(ctx context.Context, p string) (kind vault.Kind, size int64, mtime time.Time) {
	if mf := f.files[p]; mf != nil {
		return vault.KindFile, int64(len(mf.data)), mf.mtime
	}
	if _, ok := f.gone[p]; ok {
		return vault.KindNone, 0, time.Time{}
	}
	if k, n := f.inVault(ctx, p); k != vault.KindNone {
		return k, n, f.start
	}
	if f.dirs[p] {
		return vault.KindDir, 0, f.start
	}
	return vault.KindNone, 0, time.Time{}
}

// commit runs fn as one commit, then takes the new state. f.mu is held.
func (f *FS) commit(ctx context.Context, meta vault.Meta, fn func(tx *vault.Tx) error) error {
	// A commit, once begun, is finished even if the caller is interrupted.
	ctx = context.WithoutCancel(ctx)
	err := f.v.Update(ctx, meta, fn)
	if rerr := f.refresh(ctx); err == nil {
		err = rerr
	}
	return err
}

// writeFile commits data as the content of p, unless p holds it already, and
// returns what it committed: data as the screen let it through. f.mu is held.
func (f *FS) writeFile(ctx context.Context, p string, data []byte) ([]byte, error) {
	data, err := f.screen(p, data)
	if err != nil {
		return nil, err
	}
	cmd := "write"
	if k, _ := f.inVault(ctx, p); k == vault.KindNone {
		cmd = "create"
	}
	err = f.commit(ctx, vault.Meta{Command: cmd, Agent: f.agent(ctx)}, func(tx *vault.Tx) error {
		if cur, err := tx.ReadFile(ctx, p); err == nil && bytes.Equal(cur, data) {
			return nil
		}
		return tx.WriteFile(ctx, p, data)
	})
	if err != nil {
		return nil, err
	}
	delete(f.gone, p)
	return data, nil
}

// keepParents keeps each directory above p that a commit emptied (the vault
// keeps no empty directory) as an empty directory in memory, as a folder would
// keep it until rmdir. f.mu is held.
func (f *FS) keepParents(ctx context.Context, p string) {
	for d := path.Dir(p); d != vault.Root && d != "/" && d != "."; d = path.Dir(d) {
		if k, _ := f.inVault(ctx, d); k != vault.KindNone {
			return
		}
		f.dirs[d] = true
	}
}

// moveMemory moves what memory holds under the directory from to to. f.mu is held.
func (f *FS) moveMemory(from, to string) {
	re := func(p string) (string, bool) {
		if strings.HasPrefix(p, from+"/") {
			return to + p[len(from):], true
		}
		return "", false
	}
	for p, mf := range f.files {
		if np, ok := re(p); ok {
			delete(f.files, p)
			mf.path = np
			f.files[np] = mf
		}
	}
	for p := range f.dirs {
		if np, ok := re(p); ok {
			delete(f.dirs, p)
			f.dirs[np] = true
		}
	}
	for p, t := range f.gone {
		if np, ok := re(p); ok {
			delete(f.gone, p)
			f.gone[np] = t
		}
	}
	if f.dirs[from] {
		delete(f.dirs, from)
		f.dirs[to] = true
	}
}

// agent names the program behind a request: the command name the kernel keeps
// for the calling process.
func (f *FS) agent(ctx context.Context) string {
	if c, ok := ctx.(*fuse.Context); ok && c.Pid != 0 {
		if b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(c.Pid), 10) + "/comm"); err == nil {
			if name := strings.TrimSpace(string(b)); name != "" {
				return name
			}
		}
	}
	return f.opts.Agent
}

// errno maps a vault error to what the system call returns.
func errno(err error) syscall.Errno {
	var pe *vault.PathError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &pe), errors.Is(err, vault.ErrInvalid), errors.Is(err, vault.ErrRoot):
		return syscall.EINVAL
	case errors.Is(err, vault.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, vault.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, vault.ErrIsDir):
		return syscall.EISDIR
	case errors.Is(err, vault.ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, vault.ErrTooLarge):
		return syscall.EFBIG
	case errors.Is(err, vault.ErrTooManyFiles), errors.Is(err, vault.ErrVaultFull):
		return syscall.ENOSPC
	case errors.Is(err, vault.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, vault.ErrNoIdentity), errors.Is(err, vault.ErrDecrypt), errors.Is(err, errRefused):
		return syscall.EACCES
	}
	return syscall.EIO
}

// validChild returns the memory path of name in directory dir, or the error
// of a name the memory tool's path rules refuse: ENAMETOOLONG for one over 255
// bytes, as any Linux file system says, else refused, EINVAL (or ENOENT for a
// lookup: no such name can exist).
func validChild(dir, name string, refused syscall.Errno) (string, syscall.Errno) {
	if len(name) > 255 {
		return "", syscall.ENAMETOOLONG
	}
	p := dir + "/" + name
	if c, err := vault.CleanPath(p); err != nil || c != p {
		return "", refused
	}
	return p, 0
}

// node is a file or directory of the folder. Its memory path follows from its
// place in the tree, which the kernel's renames keep up to date.
type node struct {
	fs.Inode
	f *FS
}

var (
	_ fs.NodeLookuper  = (*node)(nil)
	_ fs.NodeGetattrer = (*node)(nil)
	_ fs.NodeSetattrer = (*node)(nil)
	_ fs.NodeReaddirer = (*node)(nil)
	_ fs.NodeOpener    = (*node)(nil)
	_ fs.NodeCreater   = (*node)(nil)
	_ fs.NodeMkdirer   = (*node)(nil)
	_ fs.NodeUnlinker  = (*node)(nil)
	_ fs.NodeRmdirer   = (*node)(nil)
	_ fs.NodeRenamer   = (*node)(nil)
	_ fs.NodeStatfser  = (*node)(nil)
)

// memPath is the memory path of n; false when n is no longer in the tree.
func (n *node) memPath() (string, bool) {
	if n.IsRoot() {
		return vault.Root, true
	}
	rel := n.Path(nil)
	if rel == "" {
		return "", false
	}
	// A node cut from the tree walks up to something other than the root.
	for p := &n.Inode; ; {
		_, parent := p.Parent()
		if parent == nil {
			if !p.IsRoot() {
				return "", false
			}
			break
		}
		p = parent
	}
	return vault.Root + "/" + rel, true
}

func (f *FS) fillAttr(kind vault.Kind, size int64, mtime time.Time, a *fuse.Attr) {
	if kind == vault.KindDir {
		// A directory's size is what ext4 and tmpfs show for a small one, so
		// tools that print it (the SDKs' views: "4K") print what they would on
		// a plain folder.
		a.Mode = syscall.S_IFDIR | 0o700
		a.Nlink = 2
		size = 4096
	} else {
		a.Mode = syscall.S_IFREG | 0o600
		a.Nlink = 1
	}
	a.Size = uint64(size)
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	a.Uid, a.Gid = f.uid, f.gid
	a.SetTimes(&mtime, &mtime, &mtime)
}

// child returns the node for name under n, reusing the one the tree holds when
// it is of the same kind.
func (n *node) child(ctx context.Context, name string, kind vault.Kind) *fs.Inode {
	mode := uint32(syscall.S_IFREG)
	if kind == vault.KindDir {
		mode = syscall.S_IFDIR
	}
	if ch := n.GetChild(name); ch != nil && ch.StableAttr().Mode == mode {
		return ch
	}
	return n.NewInode(ctx, &node{f: n.f}, fs.StableAttr{Mode: mode})
}

// Lookup implements fs.NodeLookuper.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	dir, ok := n.memPath()
	if !ok {
		return nil, syscall.ENOENT
	}
	p, e := validChild(dir, name, syscall.ENOENT)
	if e != 0 {
		return nil, e
	}
	f := n.f
	f.mu.Lock()
	kind, size, mtime := f.stat(ctx, p)
	f.mu.Unlock()
	if kind == vault.KindNone {
		return nil, syscall.ENOENT
	}
	f.fillAttr(kind, size, mtime, &out.Attr)
	return n.child(ctx, name, kind), 0
}

// Getattr implements fs.NodeGetattrer.
func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if h, ok := fh.(*handle); ok && h.mf != nil {
		f.fillAttr(vault.KindFile, int64(len(h.mf.data)), h.mf.mtime, &out.Attr)
		return 0
	}
	p, ok := n.memPath()
	if !ok {
		return syscall.ENOENT
	}
	kind, size, mtime := f.stat(ctx, p)
	if kind == vault.KindNone {
		return syscall.ENOENT
	}
	f.fillAttr(kind, size, mtime, &out.Attr)
	return 0
}

// Setattr implements fs.NodeSetattrer. Only a change of size does anything:
// modes, owners and times are the folder's own.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := n.memPath()
	if h, isH := fh.(*handle); isH && h.mf != nil {
		p, ok = h.mf.path, true
	}
	if !ok {
		return syscall.ENOENT
	}
	if size, set := in.GetSize(); set {
		if int64(size) > f.v.Limits().MaxFileSize {
			return syscall.EFBIG
		}
		mf := f.files[p]
		if h, isH := fh.(*handle); isH && h.mf != nil {
			mf = h.mf
		}
		if mf != nil {
			mf.data = resize(mf.data, int(size))
			mf.dirty, mf.refused, mf.mtime = true, false, time.Now()
		} else {
			// truncate(1) on a file nobody has open: one commit now.
			if k, _ := f.inVault(ctx, p); k != vault.KindFile {
				return syscall.ENOENT
			}
			data, err := f.snap.ReadFile(ctx, p)
			if err != nil {
				return errno(err)
			}
			if _, err := f.writeFile(ctx, p, resize(data, int(size))); err != nil {
				return errno(err)
			}
		}
	}
	kind, size, mtime := f.stat(ctx, p)
	if kind == vault.KindNone {
		return syscall.ENOENT
	}
	f.fillAttr(kind, size, mtime, &out.Attr)
	return 0
}

func resize(b []byte, n int) []byte {
	if n <= len(b) {
		return b[:n]
	}
	return append(b, make([]byte, n-len(b))...)
}

// Readdir implements fs.NodeReaddirer: the vault's entries, the directories and
// files held in memory, less the tombstones.
func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	dir, ok := n.memPath()
	if !ok {
		return nil, syscall.ENOENT
	}
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	modes := map[string]uint32{}
	for name, e := range f.list(ctx, dir) {
		if _, gone := f.gone[dir+"/"+name]; gone || e.Err != nil {
			continue
		}
		modes[name] = syscall.S_IFREG
		if e.Dir {
			modes[name] = syscall.S_IFDIR
		}
	}
	for p := range f.dirs {
		if path.Dir(p) == dir {
			modes[path.Base(p)] = syscall.S_IFDIR
		}
	}
	for p := range f.files {
		if path.Dir(p) == dir {
			modes[path.Base(p)] = syscall.S_IFREG
		}
	}
	names := make([]string, 0, len(modes))
	for name := range modes {
		names = append(names, name)
	}
	sort.Strings(names)
	list := make([]fuse.DirEntry, len(names))
	for i, name := range names {
		list[i] = fuse.DirEntry{Name: name, Mode: modes[name]}
	}
	return fs.NewListDirStream(list), 0
}

// Statfs implements fs.NodeStatfser, so that df and tools that check for room
// see a file system with room and the vault's limit on names.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize, out.Frsize = 4096, 4096
	out.Blocks, out.Bfree, out.Bavail = 1<<20, 1<<20, 1<<20
	out.Files, out.Ffree = 1<<20, 1<<20
	out.NameLen = 255
	return 0
}

// Open implements fs.NodeOpener.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := n.memPath()
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	h := &handle{f: f, write: flags&syscall.O_ACCMODE != syscall.O_RDONLY, append: flags&syscall.O_APPEND != 0}
	mf := f.files[p]
	if mf == nil {
		if _, gone := f.gone[p]; gone {
			return nil, 0, syscall.ENOENT
		}
		if k, _ := f.inVault(ctx, p); k != vault.KindFile {
			return nil, 0, syscall.ENOENT
		}
		var data []byte
		if flags&syscall.O_TRUNC == 0 || !h.write {
			var err error
			if data, err = f.snap.ReadFile(ctx, p); err != nil {
				return nil, 0, errno(err)
			}
		}
		if !h.write {
			h.data = data
			return h, fuse.FOPEN_DIRECT_IO, 0
		}
		mf = &memFile{path: p, data: data, mtime: f.start}
		f.files[p] = mf
	}
	if h.write && flags&syscall.O_TRUNC != 0 {
		mf.data, mf.dirty, mf.mtime = nil, true, time.Now()
	}
	mf.opens++
	h.mf = mf
	return h, fuse.FOPEN_DIRECT_IO, 0
}

// Create implements fs.NodeCreater. The new file lives in memory until it is
// closed, then is committed, unless its name is a scratch name.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	dir, ok := n.memPath()
	if !ok {
		return nil, nil, 0, syscall.ENOENT
	}
	p, e := validChild(dir, name, syscall.EINVAL)
	if e != 0 {
		return nil, nil, 0, e
	}
	f := n.f
	f.mu.Lock()
	kind, _, _ := f.stat(ctx, p)
	f.mu.Unlock()
	switch {
	case kind == vault.KindDir:
		return nil, nil, 0, syscall.EISDIR
	case kind == vault.KindFile && flags&syscall.O_EXCL != 0:
		return nil, nil, 0, syscall.EEXIST
	case kind == vault.KindFile:
		ch := n.child(ctx, name, kind)
		fh, fl, e := ch.Operations().(*node).Open(ctx, flags)
		if e == 0 {
			f.mu.Lock()
			k, size, mtime := f.stat(ctx, p)
			f.mu.Unlock()
			f.fillAttr(k, size, mtime, &out.Attr)
		}
		return ch, fh, fl, e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	mf := &memFile{path: p, scratch: Scratch(name), dirty: true, opens: 1, mtime: now}
	f.files[p] = mf
	f.fillAttr(vault.KindFile, 0, now, &out.Attr)
	h := &handle{f: f, mf: mf, write: true, append: flags&syscall.O_APPEND != 0}
	return n.child(ctx, name, vault.KindFile), h, fuse.FOPEN_DIRECT_IO, 0
}

// Mkdir implements fs.NodeMkdirer: the directory lives in memory until a file
// is committed under it.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	dir, ok := n.memPath()
	if !ok {
		return nil, syscall.ENOENT
	}
	p, e := validChild(dir, name, syscall.EINVAL)
	if e != 0 {
		return nil, e
	}
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, _, _ := f.stat(ctx, p); k != vault.KindNone {
		return nil, syscall.EEXIST
	}
	f.dirs[p] = true
	f.fillAttr(vault.KindDir, 0, f.start, &out.Attr)
	return n.child(ctx, name, vault.KindDir), 0
}

// Unlink implements fs.NodeUnlinker: one commit, unless the file only ever
// lived in memory.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	dir, ok := n.memPath()
	if !ok {
		return syscall.ENOENT
	}
	p := dir + "/" + name
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if mf := f.files[p]; mf != nil {
		mf.removed = true
		delete(f.files, p)
		if k, _ := f.inVault(ctx, p); k != vault.KindFile || f.isGone(p) {
			return 0
		}
	} else if f.isGone(p) {
		return syscall.ENOENT
	}
	switch k, _ := f.inVault(ctx, p); k {
	case vault.KindNone:
		return syscall.ENOENT
	case vault.KindDir:
		return syscall.EISDIR
	}
	err := f.commit(ctx, vault.Meta{Command: "delete", Agent: f.agent(ctx)}, func(tx *vault.Tx) error { return tx.Remove(p) })
	if err != nil {
		return errno(err)
	}
	f.keepParents(ctx, p)
	return 0
}

func (f *FS) isGone(p string) bool {
	_, ok := f.gone[p]
	return ok
}

// Rmdir implements fs.NodeRmdirer. A directory in the vault always holds
// something (the vault keeps no empty one), so only one in memory goes.
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	dir, ok := n.memPath()
	if !ok {
		return syscall.ENOENT
	}
	p := dir + "/" + name
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	switch k, _, _ := f.stat(ctx, p); k {
	case vault.KindNone:
		return syscall.ENOENT
	case vault.KindFile:
		return syscall.ENOTDIR
	}
	if k, _ := f.inVault(ctx, p); k != vault.KindNone {
		return syscall.ENOTEMPTY
	}
	for q := range f.files {
		if strings.HasPrefix(q, p+"/") {
			return syscall.ENOTEMPTY
		}
	}
	for q := range f.dirs {
		if strings.HasPrefix(q, p+"/") {
			return syscall.ENOTEMPTY
		}
	}
	delete(f.dirs, p)
	return 0
}

// Rename implements fs.NodeRenamer. A rename in the vault is one commit; a
// file held in memory renamed to an ordinary name is one commit of its content
// there (an atomic writer's temporary file renamed over its target); a file
// renamed to a scratch name (an editor's backup) looks deleted at once and is
// deleted by a commit only if nothing is written at its name soon after.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	dir, ok := n.memPath()
	if !ok {
		return syscall.ENOENT
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	newDir, ok := np.memPath()
	if !ok {
		return syscall.ENOENT
	}
	if flags&fs.RENAME_EXCHANGE != 0 {
		return syscall.EINVAL
	}
	from := dir + "/" + name
	to, e := validChild(newDir, newName, syscall.EINVAL)
	if e != 0 {
		return e
	}
	if from == to {
		return 0
	}
	if strings.HasPrefix(to, from+"/") {
		return syscall.EINVAL
	}
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	srcKind, _, _ := f.stat(ctx, from)
	dstKind, _, _ := f.stat(ctx, to)
	switch {
	case srcKind == vault.KindNone:
		return syscall.ENOENT
	case dstKind != vault.KindNone && flags&1 != 0: // RENAME_NOREPLACE
		return syscall.EEXIST
	case dstKind == vault.KindDir && srcKind == vault.KindFile:
		return syscall.EISDIR
	case dstKind == vault.KindFile && srcKind == vault.KindDir:
		return syscall.ENOTDIR
	}
	agent := f.agent(ctx)
	srcVault, _ := f.inVault(ctx, from)
	if f.isGone(from) {
		srcVault = vault.KindNone
	}
	dstVault, _ := f.inVault(ctx, to)
	if srcKind == vault.KindDir {
		if dstKind == vault.KindDir {
			if dstVault != vault.KindNone || f.hasMemoryUnder(to) {
				return syscall.ENOTEMPTY
			}
			delete(f.dirs, to)
		}
		if srcVault == vault.KindDir {
			if err := f.screenName(to); err != nil {
				return errno(err)
			}
			err := f.commit(ctx, vault.Meta{Command: "rename", Agent: agent}, func(tx *vault.Tx) error { return tx.Rename(from, to) })
			if err != nil {
				return errno(err)
			}
			f.keepParents(ctx, from)
		}
		f.moveMemory(from, to)
		return 0
	}
	mf := f.files[from]
	toScratch := Scratch(newName) && dstVault == vault.KindNone
	switch {
	case srcVault == vault.KindFile && toScratch:
		// An editor's backup: the file looks gone, its content lives on under
		// the scratch name.
		if mf == nil {
			data, err := f.snap.ReadFile(ctx, from)
			if err != nil {
				return errno(err)
			}
			mf = &memFile{data: data, mtime: f.start}
		}
		f.gone[from] = tombstone{at: time.Now(), agent: agent}
	case srcVault == vault.KindFile:
		if err := f.screenName(to); err != nil {
			return errno(err)
		}
		err := f.commit(ctx, vault.Meta{Command: "rename", Agent: agent}, func(tx *vault.Tx) error { return tx.RenameOver(from, to) })
		if err != nil {
			return errno(err)
		}
		delete(f.gone, to)
		f.keepParents(ctx, from)
	case !toScratch:
		// A file held in memory (an atomic writer's temporary file, or a new
		// file not yet closed) put in place: one commit of its content there.
		data, err := f.writeFile(ctx, to, mf.data)
		if err != nil {
			return errno(err)
		}
		mf.data, mf.dirty, mf.wrote = data, false, false
	}
	delete(f.files, from)
	if old := f.files[to]; old != nil {
		old.removed = true
	}
	delete(f.files, to)
	if mf != nil {
		mf.path, mf.scratch = to, toScratch
		if toScratch || mf.opens > 0 {
			f.files[to] = mf
		}
	}
	return 0
}

func (f *FS) hasMemoryUnder(p string) bool {
	for q := range f.files {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	for q := range f.dirs {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// handle is an open file. A read-only handle of a vault file holds the content
// it opened; a writable one shares its memFile with the other handles of it.
type handle struct {
	f      *FS
	mf     *memFile
	data   []byte
	write  bool
	append bool
}

var (
	_ fs.FileReader   = (*handle)(nil)
	_ fs.FileWriter   = (*handle)(nil)
	_ fs.FileFlusher  = (*handle)(nil)
	_ fs.FileFsyncer  = (*handle)(nil)
	_ fs.FileReleaser = (*handle)(nil)
)

// Read implements fs.FileReader.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	src := h.data
	if h.mf != nil {
		src = h.mf.data
	}
	if off >= int64(len(src)) {
		return fuse.ReadResultData(nil), 0
	}
	n := copy(dest, src[off:])
	return fuse.ReadResultData(dest[:n]), 0
}

// Write implements fs.FileWriter.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if !h.write || h.mf == nil {
		return 0, syscall.EBADF
	}
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	mf := h.mf
	if h.append {
		off = int64(len(mf.data))
	}
	end := off + int64(len(data))
	if end > h.f.v.Limits().MaxFileSize {
		return 0, syscall.EFBIG
	}
	if end > int64(len(mf.data)) {
		mf.data = resize(mf.data, int(end))
	}
	copy(mf.data[off:], data)
	mf.dirty, mf.wrote, mf.refused, mf.mtime = true, true, false, time.Now()
	return uint32(len(data)), 0
}

// Flush implements fs.FileFlusher: a close after a write commits the file, so
// close(2) returns once the change is durable, or with its error. A close with
// no write since the last commit commits nothing, not even a truncation or a
// new empty file: a shell's "> FILE" opens, truncates and closes a duplicate
// of the descriptor before it writes, and that is to be one commit. The last
// close (Release) commits such a file.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	if !h.write || h.mf == nil {
		return 0
	}
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	if !h.mf.wrote {
		return 0
	}
	return h.f.flush(ctx, h.mf)
}

// flush commits mf if it changed. f.mu is held.
func (f *FS) flush(ctx context.Context, mf *memFile) syscall.Errno {
	if !mf.dirty || mf.scratch || mf.removed {
		return 0
	}
	if mf.refused {
		return syscall.EACCES // said once, when it was refused
	}
	data, err := f.writeFile(ctx, mf.path, mf.data)
	if errors.Is(err, errRefused) {
		mf.refused = true
	}
	if err != nil {
		return errno(err)
	}
	mf.data, mf.dirty, mf.wrote = data, false, false
	return 0
}

// Fsync implements fs.FileFsyncer: what was written is committed.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if !h.write || h.mf == nil {
		return 0
	}
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	return h.f.flush(ctx, h.mf)
}

// Release implements fs.FileReleaser. A file written after its last flush (a
// writable mapping) is committed here; a committed file leaves memory.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	if h.mf == nil {
		return 0
	}
	f := h.f
	f.mu.Lock()
	defer f.mu.Unlock()
	mf := h.mf
	mf.opens--
	e := f.flush(ctx, mf)
	if mf.opens <= 0 && !mf.scratch && !mf.dirty && f.files[mf.path] == mf {
		delete(f.files, mf.path)
	}
	return e
}
