//go:build linux

package mount

import (
	"context"
	"path"
	"sort"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memvault/memvault/vault"
)

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
	p, e := validChild(dir, name, 255, syscall.ENOENT)
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
			if _, err := f.writeFile(ctx, p, resize(data, int(size)), ""); err != nil {
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
	out.NameLen = uint32(n.f.nameLimit(""))
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
	if h.write {
		mf.opener = f.agent(ctx, mf.opener)
	}
	mf.opens++
	h.mf = mf
	return h, fuse.FOPEN_DIRECT_IO, 0
}

// Create implements fs.NodeCreater. The new file lives in memory until it is
// closed, then is committed, unless its name is a scratch name, or that of an
// atomic writer's temporary file for a file beside it (see tempFor).
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	dir, ok := n.memPath()
	if !ok {
		return nil, nil, 0, syscall.ENOENT
	}
	p, e := validChild(dir, name, n.f.nameLimit(name), syscall.EINVAL)
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
	opener := f.agent(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	mf := &memFile{path: p, scratch: Scratch(name) || f.tempFor(ctx, dir, name), dirty: true, opens: 1, mtime: now, opener: opener}
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
	p, e := validChild(dir, name, n.f.nameLimit(name), syscall.EINVAL)
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
