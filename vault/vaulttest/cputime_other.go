//go:build !unix

package vaulttest

import "time"

// CPUTime is the process's CPU time where the system says; here it does not: 0.
func CPUTime() time.Duration { return 0 }
