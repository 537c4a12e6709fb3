package disk

import (
	"context"
	"os"
)

// TryLock takes an exclusive advisory lock on f for this process, without
// waiting: flock(2) on Unix, LockFileEx on Windows. It reports busy when another
// open file description holds the lock. Closing f releases it.
func TryLock(f *os.File) (busy bool, err error) { return tryLockFile(f) }

// LockContext is gitlog's one way to wait for a file lock: it takes an
// exclusive lock on f, waiting until the lock is free or ctx is done. The wait
// is a blocking lock in its own goroutine, so the kernel hands the lock over
// the moment its holder lets go; polling with back-off left it idle between
// holders and cut throughput under contention to a few dozen commits a second.
// When the lock is not taken (ctx ended, or an error), giveUp runs: at once,
// or, if ctx ended while the goroutine waits, once that goroutine has got the
// lock and let it go again.
func LockContext(ctx context.Context, f *os.File, giveUp func()) error {
	busy, err := tryLockFile(f)
	if err != nil {
		giveUp()
		return err
	}
	if !busy {
		return nil
	}
	got := make(chan error, 1)
	go func() { got <- lockFileWait(f) }()
	select {
	case err := <-got:
		if err != nil {
			giveUp()
		}
		return err
	case <-ctx.Done():
		go func() {
			if err := <-got; err == nil {
				Unlock(f)
			}
			giveUp()
		}()
		return ctx.Err()
	}
}
