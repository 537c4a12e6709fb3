package main

import (
	"os"
	"syscall"
)

// File systems whose files live only in memory (or swap): linux/magic.h.
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// memoryFolders are where an edit's plaintext may be put, in order: the
// user's runtime folder (a tmpfs of the user's own on systemd), then the
// shared memory folders. Each is used only when it is in memory.
func memoryFolders() []string {
	var out []string
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		out = append(out, d)
	}
	return append(out, "/dev/shm", "/run/shm")
}

// inMemory tells whether the folder dir is on a file system kept in memory.
func inMemory(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return uint32(st.Type) == tmpfsMagic || uint32(st.Type) == ramfsMagic
}
