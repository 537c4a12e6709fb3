//go:build unix

package gitlog

import "os"

// syncPath flushes the file at p; a read-only descriptor is enough to fsync.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
