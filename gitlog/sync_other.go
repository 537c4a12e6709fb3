//go:build unix && !linux

package gitlog

import (
	"os"

	"golang.org/x/sys/unix"
)

func fdatasync(f *os.File) error { return f.Sync() }

// syncFS writes back every dirty file; without syncfs(2) that is all file systems.
func syncFS(string) error {
	unix.Sync()
	return nil
}

// bootID is unknown here, so a journal with records is always replayed on open.
func bootID() string { return "" }
