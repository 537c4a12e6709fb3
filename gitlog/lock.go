package gitlog

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/gitlog/internal/disk"
)

// Writer is the repository's writer lock, held. Every change of a branch or tag
// is a method of Writer, so a change made without the lock does not compile.
// Unlock releases it; the Writer must not be used after.
type Writer struct {
	r      *Repo
	unlock func()
}

// Unlock releases the writer lock.
func (w *Writer) Unlock() { w.unlock() }

// Lock takes the repository's writer lock: a mutex for this process and an flock
// on memvault/lock for every process. It waits until the lock is free or ctx is
// done. It returns an error wrapping ErrReadOnly if the repository cannot be
// written.
//
// The wait for another process is lockFileContext's.
func (r *Repo) Lock(ctx context.Context) (*Writer, error) {
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	return &Writer{r: r, unlock: unlock}, nil
}

func (r *Repo) lock(ctx context.Context) (unlock func(), err error) {
	if r.readOnly {
		return nil, fmt.Errorf("gitlog: lock: %w", ErrReadOnly)
	}
	if err := r.mu.lockContext(ctx); err != nil {
		return nil, fmt.Errorf("gitlog: lock: %w", err)
	}
	f := r.lockFile
	if err := disk.LockContext(ctx, f, r.mu.Unlock); err != nil {
		return nil, fmt.Errorf("gitlog: lock: %w", err)
	}
	return func() {
		disk.Unlock(f)
		r.mu.Unlock()
	}, nil
}

// ctxMutex is a mutex (a channel with room for one) whose wait can end with a
// context: a writer in this process holding the lock long must not keep another
// goroutine's Lock past its deadline, which sync.Mutex would.
type ctxMutex chan struct{}

func (m ctxMutex) Lock()   { m <- struct{}{} }
func (m ctxMutex) Unlock() { <-m }

// lockContext locks m, or returns ctx's error if ctx ends first.
func (m ctxMutex) lockContext(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
