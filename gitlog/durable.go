package gitlog

import (
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// zlibWriters are reused: a new zlib writer allocates and clears about 1 MB of
// compressor state, which costs more than compressing a small object.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return zw
}}

func (r *Repo) loosePath(h Hash) string {
	s := h.String()
	return filepath.Join(r.dir, "objects", s[:2], s[2:])
}

// writeRef points ref at h by rename, creating the folders its name needs.
func (r *Repo) writeRef(ref plumbing.ReferenceName, h Hash) error {
	tmp, err := r.prepareRef(ref, h)
	if err != nil {
		return err
	}
	return r.placeRef(ref, tmp)
}

// prepareRef writes the value of ref pointing at h to a temporary file, for
// placeRef to put in place: the file can be made while the journal syncs, and
// only the rename has to wait for it.
func (r *Repo) prepareRef(ref plumbing.ReferenceName, h Hash) (tmp string, err error) {
	if ref != Branch {
		if err := os.MkdirAll(filepath.Dir(r.refPath(ref)), 0o755); err != nil {
			return "", err
		}
	}
	return writeTemp(r.StateDir(), []byte(h.String()+"\n"), 0o644, false)
}

// placeRef renames the file prepareRef wrote over ref, or removes it on failure.
func (r *Repo) placeRef(ref plumbing.ReferenceName, tmp string) error {
	if err := os.Rename(tmp, r.refPath(ref)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (r *Repo) refPath(ref plumbing.ReferenceName) string {
	return filepath.Join(r.dir, filepath.FromSlash(string(ref)))
}

// writeFileAtomic writes data to a temporary file beside p and renames it over p,
// syncing the file and its directory when durable is set.
func writeFileAtomic(p string, data []byte, perm fs.FileMode, durable bool) error {
	return writeFileAtomicVia(filepath.Dir(p), p, data, perm, durable)
}

// WriteFileDurable writes data to a file at p with mode perm, so that p holds
// either nothing (or its old content) or all of data, even after a crash: the
// bytes go to a temporary file beside p, which is synced and then put in place,
// and the folder is synced. With replace it swaps p by rename; without, it never
// overwrites, and an existing p gives an error wrapping fs.ErrExist.
func WriteFileDurable(p string, data []byte, perm fs.FileMode, replace bool) error {
	if replace {
		return writeFileAtomic(p, data, perm, true)
	}
	tmp, err := writeTemp(filepath.Dir(p), data, perm, true)
	if err != nil {
		return err
	}
	// link(2) fails if p exists, where rename would replace it.
	err = os.Link(tmp, p)
	os.Remove(tmp)
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// SyncDir flushes a folder's entries, so a rename into it survives a crash.
func SyncDir(dir string) error { return syncDir(dir) }

// writeFileAtomicVia is writeFileAtomic with the temporary file in tmpDir, which
// must be on the same file system. Refs use the state folder: a temporary file
// under refs/ is itself a ref to anyone listing them meanwhile (go-git failed
// with "ref file is empty").
func writeFileAtomicVia(tmpDir, p string, data []byte, perm fs.FileMode, durable bool) error {
	tmp, err := writeTemp(tmpDir, data, perm, durable)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	if durable {
		return syncDir(filepath.Dir(p))
	}
	return nil
}

// writeTemp writes data to a new temporary file in dir, synced when durable is
// set, and returns its path.
func writeTemp(dir string, data []byte, perm fs.FileMode, durable bool) (string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeFileSync creates p with data and syncs it.
func writeFileSync(p string, data []byte) error {
	return writeFileAtomic(p, data, 0o644, true)
}

// syncDir flushes a folder's entries, so a rename into it survives a crash.
// Windows cannot flush a folder, and NTFS journals its renames itself.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
