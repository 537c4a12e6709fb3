package gittest

import "os/exec"

// ownGroup does nothing: Windows has no process groups to kill at once.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd; children it started are not reached on Windows.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
