package gitlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/internal/pack"
)

// One path to an object's bytes. Every read of an object (a commit, a tree,
// a blob, whole, as a stream or only its size) looks for it in the journal
// (see journal.Index), then in the packs through gitlog's own reader
// (pack.Set), then among the loose objects, which gitlog inflates itself;
// go-git's object storage is not on the way. Set reads a pack only through
// the file it holds open, and a loose object is read through the file
// opened, so what a read found stays readable to its end, whatever a packer
// or a gc removes meanwhile: by construction, not by a retry.
//
// An object moves only forward along that path, each step installed before
// the last is removed: a flush installs the pack before it empties the
// journal, a packer writes its pack before it removes the loose objects and
// packs it merged. So a look that missed everywhere looks once more, the
// journal read again and the packs listed again if their folder changed,
// and finds an object that moved on while it looked. What is then in none of
// them is absent: the error wraps plumbing.ErrObjectNotFound. Any other
// error is damage (a pack or a loose file that does not read), which never
// wraps fs.ErrNotExist or ErrNotFound: a caller must not take it for "no such
// file".

// stored is what look found of an object: its type and size, and, as asked,
// its content whole or a stream of it.
type stored struct {
	t    plumbing.ObjectType
	size int64
	data []byte
	rd   io.ReadCloser
}

// look is the lookup above: journal, packs, loose, then once more.
func (r *Repo) look(h Hash, journal func(rawObject) (stored, error), packed, loose func() (stored, error)) (stored, error) {
	for round := range 2 {
		if round > 0 {
			r.jobjs.Refresh(r.journalPath())
		}
		if o, ok := r.jobjs.Get(h); ok {
			return journal(o)
		}
		s, err := packed()
		if !errors.Is(err, pack.ErrNotInPacks) {
			return s, err
		}
		s, err = loose()
		if !errors.Is(err, fs.ErrNotExist) {
			return s, err
		}
	}
	return stored{}, fmt.Errorf("object %s: %w", h, plumbing.ErrObjectNotFound)
}

// statObject returns the type and size of object h, inflating at most its
// header (or a delta's first bytes).
func (r *Repo) statObject(h Hash) (plumbing.ObjectType, int64, error) {
	s, err := r.look(h,
		func(o rawObject) (stored, error) { return stored{t: o.Type, size: int64(len(o.Data))}, nil },
		func() (stored, error) {
			t, n, err := r.packs.Stat(h)
			return stored{t: t, size: n}, err
		},
		func() (stored, error) {
			t, n, rd, err := r.openLoose(h)
			if err == nil {
				rd.Close()
			}
			return stored{t: t, size: n}, err
		})
	return s.t, s.size, err
}

// readWhole reads object h whole when it is of type t (or any, for
// plumbing.AnyObject) and at most limit bytes: its type and content. An
// object of another type is refused with an error wrapping ErrWrongType, a
// larger one with a *SizeError, before anything of it is inflated.
func (r *Repo) readWhole(t plumbing.ObjectType, h Hash, limit int64) (plumbing.ObjectType, []byte, error) {
	check := func(typ plumbing.ObjectType, size int64) error {
		if t != plumbing.AnyObject && typ != t {
			return fmt.Errorf("a %s, not a %s: %w", typ, t, ErrWrongType)
		}
		if size > limit || size < 0 {
			return &SizeError{Object: h, Size: size, Limit: limit}
		}
		return nil
	}
	s, err := r.look(h,
		func(o rawObject) (stored, error) {
			if err := check(o.Type, int64(len(o.Data))); err != nil {
				return stored{}, err
			}
			return stored{t: o.Type, data: bytes.Clone(o.Data)}, nil // the journal's own
		},
		func() (stored, error) {
			typ, data, err := r.packs.Get(h, t, limit)
			switch {
			case pack.IsOtherType(err):
				return stored{}, check(typ, 0)
			case errors.Is(err, ErrTooLarge):
				_, n, err := r.packs.Stat(h)
				if err != nil {
					return stored{}, err
				}
				return stored{}, check(typ, n)
			}
			return stored{t: typ, data: data}, err
		},
		func() (stored, error) {
			typ, n, rd, err := r.openLoose(h)
			if err != nil {
				return stored{}, err
			}
			defer rd.Close()
			if err := check(typ, n); err != nil {
				return stored{}, err
			}
			data, err := readLooseAll(rd)
			return stored{t: typ, data: data}, err
		})
	return s.t, s.data, err
}

// openStream opens object h as a stream, whatever its size: its type, size
// and content.
func (r *Repo) openStream(h Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	s, err := r.look(h,
		func(o rawObject) (stored, error) {
			return stored{t: o.Type, size: int64(len(o.Data)), rd: io.NopCloser(bytes.NewReader(o.Data))}, nil
		},
		func() (stored, error) {
			t, n, rd, err := r.packs.Open(h)
			return stored{t: t, size: n, rd: rd}, err
		},
		func() (stored, error) {
			t, n, rd, err := r.openLoose(h)
			return stored{t: t, size: n, rd: rd}, err
		})
	return s.t, s.size, s.rd, err
}

// object finds object h of type t (or any): a journal object whole, or one
// whose type and size are read and whose bytes are read, through the same
// lookup, when its Reader is opened. A typed object of another type is not
// found, as in go-git's storage.
func (r *Repo) object(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	if o, ok := r.jobjs.Get(h); ok && (t == plumbing.AnyObject || t == o.Type) {
		return memoryObject(o), nil
	}
	typ, size, err := r.statObject(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, fmt.Errorf("object %s is a %s, not a %s: %w", h, typ, t, plumbing.ErrObjectNotFound)
	}
	return &storedObject{r: r, h: h, t: typ, size: size}, nil
}

// storedObject is an object that object found: its bytes are read when its
// Reader is opened.
type storedObject struct {
	r    *Repo
	h    Hash
	t    plumbing.ObjectType
	size int64
}

func (o *storedObject) Hash() plumbing.Hash         { return gg(o.h) }
func (o *storedObject) Type() plumbing.ObjectType   { return o.t }
func (o *storedObject) SetType(plumbing.ObjectType) {}
func (o *storedObject) Size() int64                 { return o.size }
func (o *storedObject) SetSize(int64)               {}
func (o *storedObject) Writer() (io.WriteCloser, error) {
	return nil, errors.New("gitlog: a stored object is not written")
}

// Reader opens the object's bytes. The error never reads as a missing file:
// the object was there.
func (o *storedObject) Reader() (io.ReadCloser, error) {
	_, _, rd, err := o.r.openStream(o.h)
	if err != nil {
		return nil, unreadable(o.h, err)
	}
	return rd, nil
}

// unreadable is the error of object h, which the repository named and then
// could not give: a storage failure (a damaged repository, a disk that
// fails), which must never read as "no such file" to a caller that turns
// that into "the memory does not exist".
func unreadable(h Hash, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return fmt.Errorf("object %s is named but cannot be read: %v", h, err)
	}
	return err
}
