//go:build linux

package mount

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

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
	data, err := f.writeFile(ctx, mf.path, mf.data, mf.opener)
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
