package gitlog

import (
	"context"
)

// Watch returns a channel that receives a value soon after a branch of the
// repository may have moved, whoever moved it (this process, another one, git
// itself), until ctx is done; then the channel is closed. Values coalesce: one
// may stand for several moves, and some arrive when nothing moved, so a reader
// checks the ref itself. Where the system cannot watch files, the error wraps
// ErrWatchUnsupported.
func (r *Repo) Watch(ctx context.Context) (<-chan struct{}, error) {
	return r.watch(ctx)
}

// notify sends on ch unless a value is waiting there already.
func notify(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
