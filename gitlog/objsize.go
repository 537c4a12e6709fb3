package gitlog

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// ObjectSize returns the size of object h as its header records it, without
// inflating the object: a caller can refuse an object too big to read before
// reading it.
func (r *Repo) ObjectSize(h Hash) (int64, error) {
	r.readMu.Lock()
	defer r.readMu.Unlock()
	n, err := r.st.EncodedObjectSize(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		r.st.Reindex()
		n, err = r.st.EncodedObjectSize(h)
	}
	if err != nil {
		return 0, fmt.Errorf("gitlog: size of %s: %w", h, err)
	}
	return n, nil
}
