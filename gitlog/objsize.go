package gitlog

import "fmt"

// ObjectSize returns the size of object h as its header records it, without
// inflating the object: a caller can refuse an object too big to read before
// reading it.
func (r *Repo) ObjectSize(h Hash) (int64, error) {
	_, n, err := r.statObject(h)
	if err != nil {
		return 0, fmt.Errorf("gitlog: size of %s: %w", h, err)
	}
	return n, nil
}
