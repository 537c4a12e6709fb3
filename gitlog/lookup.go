package gitlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// find is gitlog's one way to look for object h (of type t, or any): in the
// journal first (see journal.Index), then in go-git's storage under readMu
// (see Repo.object). When the storage does not find it, or found it in a pack
// merged away since, the journal is read again, then the packs are listed
// again, and the storage asked again: an object is always in one or the other,
// since a flush installs the pack before it empties the journal.
func find[T any](r *Repo, t plumbing.ObjectType, h Hash, fromJournal func(rawObject) T, fromStorage func() (T, error)) (T, error) {
	inJournal := func(again bool) (T, bool) {
		if again {
			r.jobjs.Refresh(r.journalPath())
		}
		o, ok := r.jobjs.Get(h)
		if !ok || t != plumbing.AnyObject && t != o.Type {
			var none T
			return none, false
		}
		return fromJournal(o), true
	}
	if v, ok := inJournal(false); ok {
		return v, nil
	}
	r.readMu.Lock()
	defer r.readMu.Unlock()
	v, err := fromStorage()
	for try := 0; try < lookTries && lookAgain(err); try++ {
		if v, ok := inJournal(true); ok {
			return v, nil
		}
		r.st.Reindex()
		v, err = fromStorage()
	}
	return v, err
}

// lookTries bounds how often a read looks again. Each look lists the packs
// anew, and a look fails again only if a packer merged away a pack between the
// listing and the read: in a row, that takes packers that never stop.
const lookTries = 8

// lookAgain tells whether a read that failed with err should be tried again
// after a reindex: the object was not found, or was found in a pack that has
// been merged away since.
func lookAgain(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, dotgit.ErrPackfileNotFound)
}

// storageObject looks h up in go-git's storage, for find. go-git hands over
// an object above 16 KiB as a reference into its pack (its path and offset),
// and reads its bytes only when asked, by opening the pack again by path: a
// pack another process or handle merged away meanwhile is gone by then,
// though its index was still in memory. So such an object comes back as a
// heldObject, whose bytes are looked for again when its pack is gone. Call
// with r.readMu held, as find does.
func (r *Repo) storageObject(t plumbing.ObjectType, h Hash) (plumbing.EncodedObject, error) {
	o, err := r.st.EncodedObject(t, gg(h))
	if err != nil {
		return nil, err
	}
	if _, inMemory := o.(*plumbing.MemoryObject); inMemory {
		return o, nil
	}
	return &heldObject{EncodedObject: o, r: r, t: t, h: h}, nil
}

// heldObject is an object of go-git's storage whose bytes are read from its
// pack only when opened (see storageObject).
type heldObject struct {
	plumbing.EncodedObject
	r *Repo
	t plumbing.ObjectType
	h Hash
}

// Reader opens the object's bytes: from the pack it was found in, or, when
// that pack has been merged away since, from the pack that holds it now.
// Call with r.readMu held: every reader of object bytes in gitlog does. The
// error never reads as a missing file: the object was there.
func (o *heldObject) Reader() (io.ReadCloser, error) {
	rd, err := o.EncodedObject.Reader()
	for try := 0; try < lookTries && lookAgain(err); try++ {
		o.r.st.Reindex()
		var again plumbing.EncodedObject
		if again, err = o.r.st.EncodedObject(o.t, gg(o.h)); err == nil {
			o.EncodedObject = again
			rd, err = again.Reader()
		}
	}
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
