//go:build !linux

package main

// memoryFolders is empty here: memvault knows no folder it can prove is in
// memory, so edit refuses rather than put plaintext on a disk.
func memoryFolders() []string { return nil }

func inMemory(string) bool { return false }
