package gitlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Lock takes the repository's writer lock: a mutex for this process and an flock
// on memvault/lock for every process. It waits until the lock is free or ctx is
// done. The returned function releases it.
func (r *Repo) Lock(ctx context.Context) (unlock func(), err error) {
	r.mu.Lock()
	f, err := os.OpenFile(filepath.Join(r.dir, stateDir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("gitlog: lock: %w", err)
	}
	release := func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		r.mu.Unlock()
	}
	wait := 100 * time.Microsecond
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return release, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			r.mu.Unlock()
			return nil, fmt.Errorf("gitlog: lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			r.mu.Unlock()
			return nil, fmt.Errorf("gitlog: lock: %w", ctx.Err())
		case <-time.After(wait):
		}
		if wait < 5*time.Millisecond {
			wait *= 2
		}
	}
}
