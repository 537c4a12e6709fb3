package gitlog

import (
	"errors"
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// lookup is the repository's object storage as go-git's decoders see it. A
// commit decoded by go-git keeps its storer and reads its parents and tree
// through it later; with the raw storage those reads skipped Repo.object, so a
// walk in a long-lived process failed with "object not found" once another
// process had packed the objects it needed, and raced on go-git's lazily built
// pack index. Through lookup, every such read is Repo.object's: under the read
// lock, and looked for again after a reindex on a miss.
type lookup struct {
	*filesystem.Storage
	r *Repo
}

// EncodedObject reads through Repo.object.
func (l lookup) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	return l.r.object(t, h)
}

// HasEncodedObject looks for h as Repo.object does.
func (l lookup) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := l.r.jobjs.get(h); ok {
		return nil
	}
	l.r.readMu.Lock()
	defer l.r.readMu.Unlock()
	err := l.Storage.HasEncodedObject(h)
	for try := 0; try < lookTries && lookAgain(err); try++ {
		if _, ok := l.r.journalObject(plumbing.AnyObject, h, true); ok {
			return nil
		}
		l.Storage.Reindex()
		err = l.Storage.HasEncodedObject(h)
	}
	return err
}

// EncodedObjectSize reads the size as Repo.object would find the object.
func (l lookup) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := l.r.jobjs.get(h); ok {
		return int64(len(o.data)), nil
	}
	l.r.readMu.Lock()
	defer l.r.readMu.Unlock()
	n, err := l.Storage.EncodedObjectSize(h)
	for try := 0; try < lookTries && lookAgain(err); try++ {
		if o, ok := l.r.journalObject(plumbing.AnyObject, h, true); ok {
			return o.Size(), nil
		}
		l.Storage.Reindex()
		n, err = l.Storage.EncodedObjectSize(h)
	}
	return n, err
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
