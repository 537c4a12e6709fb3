package keys

import (
	"errors"
	"fmt"
)

// The errors callers branch on, with errors.Is. Package vault returns them
// too, under the same names.
var (
	// ErrNoIdentity: the identity file is missing or unreadable.
	ErrNoIdentity = errors.New("no usable identity")
	// ErrPassphrase: a passphrase-protected identity could not be unlocked: the
	// passphrase was wrong, or there was no way to ask for one.
	ErrPassphrase = errors.New("cannot unlock the identity")
	// ErrRecipients: a recipient that cannot be parsed or used, or a recipient set
	// memvault refuses (empty, mixing post-quantum and classical keys, or one the
	// identity in use could no longer decrypt).
	ErrRecipients = errors.New("invalid recipients")
	// ErrOthersCanWrite: a vault folder or key file that other users can
	// change, and so could make say what they like: refused until it is made
	// the user's alone.
	ErrOthersCanWrite = errors.New("other users can change it")
	// ErrWriter: a writer's key that cannot be parsed.
	ErrWriter = errors.New("not a writer's public SSH key")
	// ErrMixedRecipients: a recipient set that mixes post-quantum and classical
	// keys. It wraps ErrRecipients.
	ErrMixedRecipients = fmt.Errorf("%w: post-quantum and classical keys cannot be mixed; "+
		"every recipient must be post-quantum, or none", ErrRecipients)
)
