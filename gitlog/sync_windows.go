package gitlog

import "os"

// syncPath flushes the file at p. FlushFileBuffers needs a handle open for
// writing, and objects are read-only files, so the attribute is lifted for the
// flush and put back.
func syncPath(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o200 == 0 {
		if err := os.Chmod(p, 0o644); err != nil {
			return err
		}
		defer os.Chmod(p, fi.Mode().Perm())
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
