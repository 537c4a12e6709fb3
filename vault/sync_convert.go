package vault

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/gitlog"
)

// sealedSince says whether theirs is of the sealed format while ours is
// still plain: the remote converted the vault since this clone's own commits
// were made.
func (v *store) sealedSince(ours, theirs gitlog.Hash) (bool, error) {
	has := func(c gitlog.Hash) (bool, error) {
		root, err := v.repo.RootTree(c)
		if err != nil {
			return false, fmt.Errorf("vault: sync: %w", err)
		}
		_, err = v.repo.Lookup(root, keyPath)
		switch {
		case errors.Is(err, gitlog.ErrNotFound):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("vault: sync: %s: %w", keyPath, err)
		}
		return true, nil
	}
	if sealed, err := has(ours); err != nil || sealed {
		return false, err
	}
	return has(theirs)
}
