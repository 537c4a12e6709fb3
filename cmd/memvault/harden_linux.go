package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// envDebugDumpable, set to 1, leaves the process dumpable, for debugging
// memvault itself: core dumps as the shell's limit allows, and a debugger of
// the same user may attach.
const envDebugDumpable = "MEMVAULT_DEBUG_DUMPABLE"

// harden keeps the plaintext this process will decrypt out of crash dumps and,
// when the memory-lock limit allows, out of swap. main calls it first, before
// any vault is opened. Each step is best effort and silent: memvault fsck says
// what is missing (hardeningNotes).
func harden() {
	if os.Getenv(envDebugDumpable) != "1" {
		// Not dumpable: no core dump, and other processes of the same user can
		// neither ptrace this one nor read its /proc/PID/mem. A core limit of 0
		// (hard too, so no child raises it) also stops the dump a system with
		// fs.suid_dumpable=2 would still write.
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	}
	// Under a finite limit, memory locked for the future would make the Go
	// runtime's next mmap fail once the limit is reached, killing the process.
	if limit, err := memlockLimit(); err == nil && limit == unix.RLIM_INFINITY {
		_ = lockMemory()
	}
}

// lockMemory keeps every page of the process in RAM, those mapped now and those
// mapped later, each locked when first touched (MCL_ONFAULT), so that the
// runtime's large address reservations cost no memory. A variable, as
// memlockLimit is, so that a test can see harden's decision under a limit the
// machine will not grant.
var lockMemory = func() error {
	return unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
}

// memlockLimit is the process's soft RLIMIT_MEMLOCK, in bytes.
var memlockLimit = func() (uint64, error) {
	var l unix.Rlimit
	err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &l)
	return l.Cur, err
}

// swapActive tells whether the system swaps to any device or file now
// (/proc/swaps lists one under its header). Unlocked memory only matters
// then: most machines run under a finite memlock limit, and a note every fsck
// printed about it, swap or none, taught people to skip notes. When the list
// cannot be read, it says yes. A variable, so that a test can give either
// answer.
var swapActive = func() bool {
	b, err := os.ReadFile("/proc/swaps")
	if err != nil {
		return true
	}
	return bytes.Count(bytes.TrimSpace(b), []byte("\n")) > 0
}

// hardeningNotes says, for memvault fsck, which of harden's protections this
// process lacks where it matters, and how to get them. It asks the process
// itself, not what harden meant to do: its dumpable flag (which only it can
// read) and its locked memory, the latter only while the system has swap on.
func hardeningNotes() []string {
	var notes []string
	if dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || dumpable != 0 {
		why := "the system refused to turn that off"
		if os.Getenv(envDebugDumpable) == "1" {
			why = envDebugDumpable + " is set; unset it unless you are debugging memvault"
		}
		notes = append(notes, "this process is dumpable, so a crash may write decrypted memories to a core dump, "+
			"and a debugger may read them ("+why+")")
	}
	if lockedKB() > 0 || !swapActive() {
		return notes
	}
	limit, err := memlockLimit()
	switch {
	case err != nil:
		notes = append(notes, "swap is on and memory is not locked: decrypted memories may be written to swap")
	case limit == unix.RLIM_INFINITY:
		notes = append(notes, "swap is on and memory is not locked: decrypted memories may be written to swap "+
			"(the memlock limit is unlimited, but the system refused to lock)")
	default:
		notes = append(notes, fmt.Sprintf("swap is on and memory is not locked: decrypted memories may be written to swap. "+
			"memvault locks memory under an unlimited memlock limit (it is %d KiB): 'ulimit -l unlimited', "+
			"or encrypted swap", limit/1024))
	}
	return notes
}

// lockedKB is the process's locked memory, VmLck in /proc/self/status; 0 when
// it cannot be read.
func lockedKB() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return vmLck(status)
}

// vmLck reads VmLck, in KiB, from the text of a /proc/PID/status file.
func vmLck(status []byte) int64 {
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmLck:")); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return n
		}
	}
	return 0
}
