package disk

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// The whole file is locked: LockFileEx locks a byte range, and a range past the
// end of any real file stands for all of it.
const lockLow, lockHigh = ^uint32(0), ^uint32(0)

// tryLockFile takes an exclusive lock on f without waiting; busy reports that
// another holder has it.
func tryLockFile(f *os.File) (busy bool, err error) {
	err = windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, lockLow, lockHigh, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	return false, err
}

// lockFileWait takes an exclusive lock on f, waiting as long as it takes.
func lockFileWait(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, lockLow, lockHigh, new(windows.Overlapped))
}

// Unlock lets go of the lock on f.
func Unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockLow, lockHigh, new(windows.Overlapped))
}
