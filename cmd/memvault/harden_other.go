//go:build !linux

package main

// harden does nothing here: memvault keeps plaintext out of crash dumps and
// swap on Linux only.
func harden() {}

// hardeningNotes has nothing to say where harden does nothing.
func hardeningNotes() []string { return nil }
