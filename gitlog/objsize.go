package gitlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
)

// ObjectSize returns the size of object h as its header records it, without
// inflating the object: a caller can refuse an object too big to read before
// reading it.
func (r *Repo) ObjectSize(h Hash) (int64, error) {
	if o, ok := r.jobjs.Get(h); ok {
		return int64(len(o.Data)), nil
	}
	// A loose object's header is read here: go-git's EncodedObjectSize leaves
	// the loose file open (v5.19.3), which kept a read-only mount busy.
	if n, err := looseSize(filepath.Join(r.dir, "objects", h.String()[:2], h.String()[2:])); err == nil {
		return n, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("gitlog: size of %s: %w", h, err)
	}
	n, err := find(r, plumbing.AnyObject, h, func(o rawObject) int64 { return int64(len(o.Data)) }, func() (int64, error) { return r.st.EncodedObjectSize(gg(h)) })
	if err != nil {
		return 0, fmt.Errorf("gitlog: size of %s: %w", h, err)
	}
	return n, nil
}

// looseSize reads the size in the header of the loose object file at p.
func looseSize(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zr, err := objfile.NewReader(f)
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	_, n, err := zr.Header()
	return n, err
}
