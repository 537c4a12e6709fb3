package gitlog

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// ErrStop ends a Walk early without error.
var ErrStop = errors.New("stop walk")

// Walk calls fn for from and each of its ancestors, each once, children before
// their parents (pre-order, first parent first), until fn returns ErrStop or an
// error, which Walk returns unless it is ErrStop.
func (r *Repo) Walk(from Hash, fn func(*object.Commit) error) error {
	if from.IsZero() {
		return nil
	}
	c, err := r.ReadCommit(from)
	if err != nil {
		return err
	}
	err = object.NewCommitPreorderIter(c, nil, nil).ForEach(func(c *object.Commit) error {
		if err := fn(c); errors.Is(err, ErrStop) {
			return storer.ErrStop
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gitlog: walk: %w", err)
	}
	return nil
}
