// Package contract holds what the memory tool's faces (agent's Handler and
// Serve, the MCP server, the Claude agent loop) must do and say exactly alike,
// so that the text the model sees stays one: the answer to a failure outside
// the contract, the lines a view_range selects, and the note that a file was
// shown.
package contract

import (
	"context"
	"errors"

	"github.com/memvault/memvault/vault"
)

// InternalError is a failure outside the contract while running a command.
type InternalError struct {
	Command string
	Err     error
}

func (e *InternalError) Error() string { return "agent: " + e.Command + ": " + e.Err.Error() }

func (e *InternalError) Unwrap() error { return e.Err }

// StorageFailure is what a failure of the vault's storage is called in an
// answer: a read or write that failed for a reason other than the contract's
// (a damaged or unreadable repository, a disk that fails). It is never
// answered as "does not exist", which would tell the model that a memory it
// wrote is gone; it says what to do instead.
const StorageFailure = "storage failure (try again; if it fails again, run memvault fsck)"

// InternalAnswer is the answer text for a failure outside the memory tool
// contract, err as agent's Handler.Run returned it: "Error: memvault: {command}
// failed: {what}", with {what} a short fixed description (no paths on the disk,
// no key material, no plaintext), as Handler.Handle answers.
func InternalAnswer(err error) string {
	what := StorageFailure
	switch {
	case errors.Is(err, vault.ErrNoIdentity):
		what = "no usable identity"
	case errors.Is(err, vault.ErrDecrypt):
		what = "cannot decrypt a memory file"
	case errors.Is(err, context.Canceled):
		what = "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		what = "timed out"
	}
	cmd := "command"
	var ie *InternalError
	if errors.As(err, &ie) {
		cmd = ie.Command
	}
	return "Error: memvault: " + cmd + " failed: " + what
}

// SelectLines turns view_range [a, b] into the 1-based lines first to last of a
// file of n lines, as the memory tool's view reads it; first > last when nothing is selected.
func SelectLines(a, b int64, n int) (first, last int) {
	first, last = n+1, n
	if a <= int64(n) {
		first = int(max(a, 1))
	}
	switch {
	case b == -1 || b >= int64(n):
		last = n
	case b < -int64(n) || b == 0:
		last = 0
	case b < 0:
		last = n + int(b)
	default:
		last = int(b)
	}
	return first, last
}

// viewRecorder is a store that notes which files are read, so that files no
// one uses can expire (memvault expire). *vault.Vault is one.
type viewRecorder interface {
	RecordView(p string) error
}

// RecordView notes a read of file p in store, when store keeps views (as
// *vault.Vault does), so that memvault expire keeps a file a model is shown.
// Both faces that hand a file's content to a model call it: the memory tool's
// view and an MCP resource read. A failure to note it is not the model's
// concern: at worst the file looks older.
func RecordView(store any, p string) {
	if r, ok := store.(viewRecorder); ok {
		_ = r.RecordView(p)
	}
}
