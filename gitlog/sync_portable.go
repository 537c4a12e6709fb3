//go:build !linux

package gitlog

import "os"

// Without syncfs(2), one call cannot make a whole file system durable (sync(2)
// on macOS and the BSDs only schedules the writes). So a checkpoint makes durable
// exactly the files the journal put in place since the last one: each loose
// object, each ref, and their folders. It runs once per checkpointBytes of
// journal, so its cost is spread as thin as syncfs's.

// fdatasync flushes f to stable storage. os.File.Sync is F_FULLFSYNC on macOS,
// which reaches the disk where plain fsync stops at the drive's cache, and
// FlushFileBuffers on Windows.
func fdatasync(f *os.File) error { return f.Sync() }

// bootID is unknown here, so a journal with records is replayed on every open:
// correct, and cheap for a journal that is checkpointed every few megabytes.
func bootID() string { return "" }

func syncFS(dir string) error { return syncJournaled(dir) }
