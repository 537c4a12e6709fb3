package gitlog

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS writes back every dirty file of the file system that holds dir, so a
// benchmark times nothing of the seeding's writeback.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
