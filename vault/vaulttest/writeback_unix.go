//go:build unix

package vaulttest

import "syscall"

// Writeback flushes every dirty page of the machine, so the writeback of a
// test's setup does not land inside what a benchmark times.
func Writeback() { syscall.Sync() }
