package gitlog

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Lock takes the repository's writer lock: a mutex for this process and an flock
// on memvault/lock for every process. It waits until the lock is free or ctx is
// done. The returned function releases it.
//
// The wait is a blocking flock in its own goroutine, so the kernel hands the lock
// to the next waiter the moment it is released; polling with back-off left it idle
// between writers and cut throughput under contention to a few dozen commits a
// second. If ctx ends first, the goroutine releases the lock as soon as it gets it.
func (r *Repo) Lock(ctx context.Context) (unlock func(), err error) {
	r.mu.Lock()
	fd := int(r.lockFile.Fd())
	release := func() {
		unix.Flock(fd, unix.LOCK_UN)
		r.mu.Unlock()
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		return release, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		r.mu.Unlock()
		return nil, fmt.Errorf("gitlog: lock: %w", err)
	}
	got := make(chan error, 1)
	go func() { got <- flockWait(fd) }()
	select {
	case err := <-got:
		if err != nil {
			r.mu.Unlock()
			return nil, fmt.Errorf("gitlog: lock: %w", err)
		}
		return release, nil
	case <-ctx.Done():
		go func() {
			if err := <-got; err == nil {
				unix.Flock(fd, unix.LOCK_UN)
			}
			r.mu.Unlock()
		}()
		return nil, fmt.Errorf("gitlog: lock: %w", ctx.Err())
	}
}

// flockWait takes an exclusive flock on fd, waiting as long as it takes.
func flockWait(fd int) error {
	for {
		if err := unix.Flock(fd, unix.LOCK_EX); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
