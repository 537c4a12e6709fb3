package gitlog

import "os"

// TryLockFile takes an exclusive advisory lock on f for this process, without
// waiting: flock(2) on Unix, LockFileEx on Windows. It reports busy when another
// open file description holds the lock. Closing f releases it.
func TryLockFile(f *os.File) (busy bool, err error) { return tryLockFile(f) }
