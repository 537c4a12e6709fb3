//go:build linux

package mount

import (
	"context"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/memvault/memvault/vault"
)

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
	to, e := validChild(newDir, newName, n.f.nameLimit(newName), syscall.EINVAL)
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
		data, err := f.writeFile(ctx, to, mf.data, mf.opener)
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
