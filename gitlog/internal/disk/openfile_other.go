//go:build !unix

package disk

import (
	"fmt"
	"os"
)

// OpenRegular opens the file at p for reading only if it is a regular file.
func OpenRegular(p string) (*os.File, error) {
	if fi, err := os.Lstat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.Open(p)
}
