//go:build !linux

package disk

import "os"

// fdatasync flushes f to stable storage. os.File.Sync is F_FULLFSYNC on macOS,
// which reaches the disk where plain fsync stops at the drive's cache, and
// FlushFileBuffers on Windows.
func fdatasync(f *os.File) error { return f.Sync() }

// BootID is unknown here, so a journal with records is replayed on every open:
// correct, and cheap for a journal that is flushed every few megabytes.
func BootID() string { return "" }

// StartWriteback does nothing here: the sync at the end writes the whole pack.
func StartWriteback(*os.File, int64, int64) {}
