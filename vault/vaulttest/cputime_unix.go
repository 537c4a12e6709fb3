//go:build unix

package vaulttest

import (
	"syscall"
	"time"
)

// CPUTime is the user and system time the process has used so far, 0 where
// the system does not say. On a machine shared with other work a benchmark's
// wall time grows with the load; its CPU time does not.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
