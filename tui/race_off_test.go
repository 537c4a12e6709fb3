//go:build !race

package tui

// raceEnabled says the tests run under the race detector, which slows
// everything many times over: a bound on wall time holds only without it.
const raceEnabled = false
