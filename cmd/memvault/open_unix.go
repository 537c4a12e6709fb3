//go:build unix

package main

import (
	"os"
	"syscall"
)

// openNoFollow opens the file at p for reading without following a symbolic
// link in its last element, and without waiting on a FIFO or a device: a
// file swapped for either between a listing and the open is opened as what
// it is now, for the caller to refuse by its type.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
