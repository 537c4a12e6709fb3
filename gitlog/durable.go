package gitlog

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"path/filepath"
	"sync"
)

// zlibWriters are reused: a new zlib writer allocates and clears about 1 MB of
// compressor state, which costs more than compressing a small object.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return zw
}}

// zlibStored are zlib writers that store without compressing, for blobs in
// packs: a blob is an age ciphertext, which deflate cannot shrink, and
// finding that out took BestSpeed about 80 times as long as storing it (67 µs
// against 0.8 µs for a 1.2 KB file, the same bytes out), for every blob a
// push, a fetch or a pack of the journal writes.
var zlibStored = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
	return zw
}}

// zlibReaders are reused, as zlibWriters are: a new zlib reader allocates
// about 40 KB of window and tables, more than most objects it inflates. A
// push that read a few thousand trees from packs one new reader each spent
// as long collecting them as inflating.
var zlibReaders sync.Pool

var errTrailingData = errors.New("zlib data past the object's size")

// inflateInto inflates z into out, filling it exactly; when exact, z must
// hold no more than that.
func inflateInto(z, out []byte, exact bool) error {
	br := bytes.NewReader(z)
	zr, _ := zlibReaders.Get().(io.ReadCloser)
	if zr == nil {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return err
		}
	} else if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
		return err // the reader is dropped: it holds the error
	}
	if _, err := io.ReadFull(zr, out); err != nil {
		return err
	}
	if exact {
		var one [1]byte
		if n, _ := zr.Read(one[:]); n != 0 {
			return errTrailingData
		}
	}
	zlibReaders.Put(zr)
	return nil
}

func (r *Repo) loosePath(h Hash) string {
	s := h.String()
	return filepath.Join(r.dir, "objects", s[:2], s[2:])
}

// writeRef points ref's file at h by rename, creating the folders its name
// needs. The caller syncs the ref's folder.
func (r *Repo) writeRef(ref string, h Hash) error {
	if ref != Branch {
		if err := r.disk.MkdirAll(filepath.Dir(r.refPath(ref)), 0o755); err != nil {
			return err
		}
	}
	tmp, err := r.disk.WriteTemp(r.StateDir(), []byte(h.String()+"\n"), 0o644, true)
	if err != nil {
		return err
	}
	if err := r.disk.Rename(tmp, r.refPath(ref)); err != nil {
		r.disk.Remove(tmp)
		return err
	}
	return nil
}

func (r *Repo) refPath(ref string) string {
	return filepath.Join(r.dir, filepath.FromSlash(string(ref)))
}
