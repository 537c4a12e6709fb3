//go:build unix

package transport

import (
	"os"
	"strconv"
	"syscall"
)

// ownedByUser tells whether the folder dir belongs to the user running this
// process, as git's safe.directory rule judges a repository: its owner is the
// effective user, or, for root under sudo, the user sudo ran for.
func ownedByUser(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	euid := os.Geteuid()
	if int(st.Uid) == euid {
		return true
	}
	if euid == 0 {
		if id, err := strconv.Atoi(os.Getenv("SUDO_UID")); err == nil && id == int(st.Uid) {
			return true
		}
	}
	return false
}
