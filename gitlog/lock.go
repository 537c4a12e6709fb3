package gitlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Lock takes the repository's writer lock: a mutex for this process and an flock
// on memvault/lock for every process. It waits until the lock is free or ctx is
// done. The returned function releases it.
func (r *Repo) Lock(ctx context.Context) (unlock func(), err error) {
	r.mu.Lock()
	fd := int(r.lockFile.Fd())
	wait := 100 * time.Microsecond
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() {
				unix.Flock(fd, unix.LOCK_UN)
				r.mu.Unlock()
			}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			r.mu.Unlock()
			return nil, fmt.Errorf("gitlog: lock: %w", err)
		}
		select {
		case <-ctx.Done():
			r.mu.Unlock()
			return nil, fmt.Errorf("gitlog: lock: %w", ctx.Err())
		case <-time.After(wait):
		}
		if wait < 5*time.Millisecond {
			wait *= 2
		}
	}
}
