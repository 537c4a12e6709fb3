// Package keyhook holds the few knobs package vault exposes to its tests and to
// the tests of the commands built on it (through vault/vaulttest), as age keeps
// testOnly hooks: nothing here changes behaviour unless a test sets it.
package keyhook

import "sync/atomic"

// ScryptRuns counts the scrypt key derivations vault has run to unlock
// passphrase-protected identity files, successful or not. It always counts; it
// costs one atomic add per unlock.
var ScryptRuns atomic.Int64

// WorkFactor, when above zero, is the scrypt work factor (log2 N) of identity
// files protected from now on, instead of age's default. Tests lower it.
var WorkFactor atomic.Int32

// FailAfter, when above zero, makes a re-encryption fail with ErrInjected once
// that many files are done, as if it had been interrupted.
var FailAfter atomic.Int64

// ErrInjected is the failure FailAfter injects.
var ErrInjected = injected{}

type injected struct{}

func (injected) Error() string { return "re-encryption interrupted by a test hook" }
