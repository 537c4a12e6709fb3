//go:build unix

package disk

import (
	"fmt"
	"os"
	"syscall"
)

// OpenRegular opens the file at p for reading only if it is a regular file:
// never following a symbolic link in its last element, never waiting on a
// FIFO or a device. A vault folder may come from anyone, and a journal that
// was a FIFO once hung sync past its timeout and SIGTERM.
func OpenRegular(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}

func checkRegular(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%v)", f.Name(), fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
