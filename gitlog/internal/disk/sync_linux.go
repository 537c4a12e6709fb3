package disk

import (
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// fdatasync flushes f's data to stable storage.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// StartWriteback starts writing n bytes of f at off back to the disk, without
// waiting.
func StartWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// BootID names the running boot of the machine, so a journal written since it
// needs no replay.
var BootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})
