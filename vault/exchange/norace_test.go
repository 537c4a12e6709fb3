//go:build !race

package exchange_test

// raceEnabled says whether the tests run under the race detector.
const raceEnabled = false
