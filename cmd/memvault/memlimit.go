package main

import (
	"os"
	"runtime/debug"
)

// memoryLimit is the heap size past which the garbage collector runs harder
// rather than let the heap double, so that a long-lived serve, mcp or ui stays
// well under 150 MB resident on a 10,000-file vault (TestRSS). Only what the
// caches hold stays live; the rest is garbage from JSON and decryption.
const memoryLimit = 100 << 20

// limitMemory sets memoryLimit as the runtime's soft memory limit, unless
// GOMEMLIMIT names one.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
