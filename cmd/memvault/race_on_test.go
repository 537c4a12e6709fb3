//go:build race

package main

// raceEnabled: the tests run under the race detector, where every command
// takes many times as long.
const raceEnabled = true
