package agent

import (
	"errors"

	"github.com/memvault/memvault/vault"
)

// limitFailure turns the vault's refusal of a write over one of its limits into
// the answer the model gets, and so a path the vault cannot store (a name too
// long for a sealed vault, which CleanPath alone cannot know); any other error
// comes back as it is. The vault enforces the limits, once per change, for
// every way of changing it (see vault.LimitError); the agent only words the
// answer.
func limitFailure(err error) error {
	var pe *vault.PathError
	if errors.As(err, &pe) {
		return fail("Invalid path %s: %s", pe.Path, pe.Reason)
	}
	var le *vault.LimitError
	if !errors.As(err, &le) {
		return err
	}
	switch le.Err {
	case vault.ErrTooManyFiles:
		return fail("Cannot create %s: the memory directory would hold %d files, over the limit of %d files. "+
			"Delete memory files you no longer need, or merge small ones, then try again.", le.Path, le.Would, le.Limit)
	case vault.ErrVaultFull:
		return fail("Cannot write %s: the memory directory would hold %d bytes, over the limit of %d bytes. "+
			"Delete or shorten memory files you no longer need, then try again.", le.Path, le.Would, le.Limit)
	}
	return fail("File %s would be %d bytes, over the limit of %d bytes", le.Path, le.Would, le.Limit)
}
