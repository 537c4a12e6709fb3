package gitlog

import (
	"errors"
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// find is gitlog's one way to look for object h (of type t, or any): in the
// journal first (see journalObjects), then in go-git's storage under readMu
// (see Repo.object). When the storage does not find it, or found it in a pack
// merged away since, the journal is read again, then the packs are listed
// again, and the storage asked again: an object is always in one or the other,
// since a flush installs the pack before it empties the journal.
func find[T any](r *Repo, t plumbing.ObjectType, h Hash, fromJournal func(rawObject) T, fromStorage func() (T, error)) (T, error) {
	inJournal := func(again bool) (T, bool) {
		if again {
			r.jobjs.refresh(r.journalPath())
		}
		o, ok := r.jobjs.get(h)
		if !ok || t != plumbing.AnyObject && t != o.typ {
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
