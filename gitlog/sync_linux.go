package gitlog

import (
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// syncFS writes back every dirty file of the file system that holds dir; the
// benchmarks use it to let writeback finish before anything is timed.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}

// bootID names the running boot of the machine, so a journal written since it
// needs no replay.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})
