//go:build !unix

package main

import "os"

// openNoFollow opens the file at p for reading. Where there are no
// O_NOFOLLOW and O_NONBLOCK, the type of what was opened is still checked.
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }
