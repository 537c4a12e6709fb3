package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHardening starts the memvault binary under limits set as a user sets
// them (sh's ulimit, then exec) and reads what the kernel says of the running
// process: its core limit in /proc/PID/limits, its locked memory in
// /proc/PID/status. Whether it is dumpable only the process itself can read
// (PR_GET_DUMPABLE), so that comes from its own report: the notes of fsck.
func TestHardening(t *testing.T) {
	p := newProcess(t, t.TempDir())
	p.run(t, "", "init")
	// Whether this machine lets a process raise its memlock limit to unlimited
	// (it takes CAP_SYS_RESOURCE, or a hard limit already unlimited).
	canUnlimit := exec.Command("sh", "-c", "ulimit -l unlimited").Run() == nil
	const skipUnlimit = "skipped: cannot raise the memlock limit to unlimited here, so the locked binary is untested (TestLockMemory still locks, and TestHardenMemlockDecision checks the decision under an unlimited limit)"

	// The core limit any process started under ulimit -c 1024 has (sh counts
	// in blocks of 512 or 1024 bytes).
	coreLimit := shellLimit(t, "ulimit -c 1024", "Max core file size")
	if coreLimit == "0 0" {
		t.Fatalf("ulimit -c 1024 gives a core limit of %q: the tests below would prove nothing", coreLimit)
	}
	t.Run("core dumps off", func(t *testing.T) {
		pid := p.startServe(t, "ulimit -c 1024")
		if got := procLimit(t, pid, "Max core file size"); got != "0 0" {
			t.Errorf("memvault serve started under ulimit -c 1024: core file size limit %q, want 0 0", got)
		}
	})
	t.Run("debug keeps core dumps", func(t *testing.T) {
		pid := p.startServe(t, "ulimit -c 1024", envDebugDumpable+"=1")
		if got := procLimit(t, pid, "Max core file size"); got != coreLimit {
			t.Errorf("memvault serve with %s=1 under ulimit -c 1024: core file size limit %q, want %q",
				envDebugDumpable, got, coreLimit)
		}
	})
	t.Run("not locked under a finite memlock limit", func(t *testing.T) {
		pid := p.startServe(t, "ulimit -l 1024")
		if got := procLocked(t, pid); got != 0 {
			t.Errorf("memvault serve under ulimit -l 1024: VmLck %d kB, want 0", got)
		}
	})
	t.Run("locked when memlock is unlimited", func(t *testing.T) {
		if !canUnlimit {
			t.Skip(skipUnlimit)
		}
		pid := p.startServe(t, "ulimit -l unlimited")
		if got := procLocked(t, pid); got <= 0 {
			t.Errorf("memvault serve under ulimit -l unlimited: VmLck %d kB, want it locked", got)
		}
	})

	dumpable := regexp.MustCompile(`(?m)^note: this process is dumpable.*` + envDebugDumpable + ` is set`)
	notLocked := regexp.MustCompile(`(?m)^note: swap is on and memory is not locked.*\(it is 1024 KiB\): 'ulimit -l unlimited'`)
	// Unlocked memory is noted only while the system swaps: these child
	// processes read this machine's /proc/swaps.
	ifSwap := func(rs ...*regexp.Regexp) []*regexp.Regexp {
		if swapActive() {
			return append(rs, notLocked)
		}
		return rs
	}
	for _, tt := range []struct {
		name, limits string
		env          []string
		want         []*regexp.Regexp // the notes fsck prints, in order
	}{
		{"fsck notes a finite memlock limit when swap is on", "ulimit -l 1024", nil, ifSwap()},
		{"fsck notes a dumpable process", "ulimit -l 1024", []string{envDebugDumpable + "=1"}, ifSwap(dumpable)},
		{"fsck notes nothing when all is done", "ulimit -l unlimited", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.limits, "unlimited") && !canUnlimit {
				t.Skip(skipUnlimit)
			}
			out, err := p.shell(tt.limits, tt.env, "fsck").Output()
			if err != nil {
				t.Fatalf("%s; memvault fsck: %v", tt.limits, err)
			}
			notes := regexp.MustCompile(`(?m)^note: .*$`).FindAllString(string(out), -1)
			ok := len(notes) == len(tt.want)
			for i := 0; ok && i < len(notes); i++ {
				ok = tt.want[i].MatchString(notes[i])
			}
			if !ok || !strings.HasSuffix("\n"+string(out), "\nok: history, objects, encryption and identity are sound\n") {
				t.Errorf("%s; memvault fsck (env %q) printed\n%s\nwant the notes %q, then ok", tt.limits, tt.env, out, tt.want)
			}
		})
	}
}

// TestLockMemory runs lockMemory, as harden does under an unlimited memlock
// limit, in a child test process, and checks the kernel then counts its memory
// as locked. The binary only locks under that limit, which TestHardening cannot
// always get; mlockall itself works under a finite one with CAP_IPC_LOCK.
func TestLockMemory(t *testing.T) {
	const child = "MEMVAULT_TEST_LOCK_CHILD"
	if os.Getenv(child) == "1" {
		err := lockMemory()
		switch {
		case errors.Is(err, unix.ENOMEM), errors.Is(err, unix.EPERM):
			fmt.Printf("cannot lock: %v\n", err)
		case err != nil:
			fmt.Printf("lockMemory: %v\n", err)
		default:
			fmt.Printf("VmLck %d\n", lockedKB())
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestLockMemory$")
	cmd.Env = append(os.Environ(), child+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child test: %v\n%s", err, out)
	}
	var kb int64
	switch line, _, _ := strings.Cut(string(out), "\n"); {
	case strings.HasPrefix(line, "cannot lock: "):
		t.Skipf("skipped: %s (no CAP_IPC_LOCK, and the memlock limit is below the process's size)", line)
	case strings.HasPrefix(line, "VmLck "):
		fmt.Sscan(strings.TrimPrefix(line, "VmLck "), &kb)
	default:
		t.Fatalf("child test printed %q, want its VmLck", out)
	}
	if kb <= 0 {
		t.Errorf("after lockMemory: VmLck %d kB, want the process locked", kb)
	}
}

// shell is a command that runs memvault args after sh has run limits (ulimit
// commands), with env added to the process's environment. sh execs memvault,
// so the command's process is memvault's.
func (p *process) shell(limits string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("sh", append([]string{"-c", limits + ` && exec "$0" "$@"`, p.exe}, args...)...)
	cmd.Env = append(append([]string{}, p.env...), env...)
	return cmd
}

// startServe starts memvault serve through shell, waits for its answer to a
// first request (so its start is behind it), and returns its pid. The process
// ends with the test.
func (p *process) startServe(t *testing.T, limits string, env ...string) int {
	t.Helper()
	cmd := p.shell(limits, env, "serve")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	fmt.Fprintln(stdin, `{"id":1,"input":{"command":"view","path":"/memories"}}`)
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(line, `{"id":1,`) {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("%s; memvault serve answered %q, %v\nstderr: %s", limits, line, err, stderr.String())
	}
	return cmd.Process.Pid
}

// shellLimit returns the limit name, as procLimit does, of a process started
// after limits.
func shellLimit(t *testing.T, limits, name string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", limits+" && exec cat /proc/self/limits").Output()
	if err != nil {
		t.Fatalf("%s; cat /proc/self/limits: %v", limits, err)
	}
	return findLimit(t, "/proc/self/limits after "+limits, string(out), name)
}

// procLimit returns the soft and hard values of the limit name in
// /proc/PID/limits, as "soft hard".
func procLimit(t *testing.T, pid int, name string) string {
	t.Helper()
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	return findLimit(t, fmt.Sprintf("/proc/%d/limits", pid), string(limits), name)
}

// findLimit returns "soft hard" of the limit name in the text of a limits file.
func findLimit(t *testing.T, file, limits, name string) string {
	t.Helper()
	for line := range strings.Lines(limits) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				return f[0] + " " + f[1]
			}
		}
	}
	t.Fatalf("%s has no %q:\n%s", file, name, limits)
	return ""
}

// procLocked returns VmLck, in KiB, from /proc/PID/status.
func procLocked(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(status, []byte("\nVmLck:")) {
		t.Fatalf("/proc/%d/status has no VmLck:\n%s", pid, status)
	}
	return vmLck(status)
}

// TestHardenMemlockDecision runs harden's decision under memlock limits this
// machine may not grant (an unlimited one takes CAP_SYS_RESOURCE, so
// TestHardening skips it here): harden locks memory only under an unlimited
// limit, and fsck's note names the limit it saw. The limit is injected; the
// lock is recorded, not made, so the test process stays as it is.
func TestHardenMemlockDecision(t *testing.T) {
	t.Setenv(envDebugDumpable, "1") // harden leaves the test process dumpable
	oldLimit, oldLock, oldSwap := memlockLimit, lockMemory, swapActive
	t.Cleanup(func() { memlockLimit, lockMemory, swapActive = oldLimit, oldLock, oldSwap })
	swapActive = func() bool { return true }
	if lockedKB() > 0 {
		t.Fatalf("the test process has VmLck %d kB before any test locks it", lockedKB())
	}
	for _, tt := range []struct {
		name  string
		limit uint64
		err   error
		lock  bool
		note  string // the end of fsck's note on memory
	}{
		{"unlimited", unix.RLIM_INFINITY, nil, true, "(the memlock limit is unlimited, but the system refused to lock)"},
		{"1 MiB", 1 << 20, nil, false, "(it is 1024 KiB): 'ulimit -l unlimited', or encrypted swap"},
		{"one byte short of unlimited", unix.RLIM_INFINITY - 1, nil, false, "or encrypted swap"},
		{"zero", 0, nil, false, "(it is 0 KiB): 'ulimit -l unlimited', or encrypted swap"},
		{"unreadable", unix.RLIM_INFINITY, unix.EPERM, false, "swap is on and memory is not locked: decrypted memories may be written to swap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			memlockLimit = func() (uint64, error) { return tt.limit, tt.err }
			locked := false
			lockMemory = func() error { locked = true; return unix.EPERM }
			harden()
			if locked != tt.lock {
				t.Errorf("harden under a memlock limit of %d (err %v) locked memory: %v, want %v", tt.limit, tt.err, locked, tt.lock)
			}
			notes := hardeningNotes()
			if len(notes) == 0 || !strings.HasPrefix(notes[len(notes)-1], "swap is on and memory is not locked") || !strings.HasSuffix(notes[len(notes)-1], tt.note) {
				t.Errorf("hardeningNotes under a memlock limit of %d (err %v) = %q, want the last to end %q", tt.limit, tt.err, notes, tt.note)
			}
		})
	}
	// With no swap, unlocked memory cannot reach a disk that way: fsck once
	// noted it on every machine with a finite memlock limit, which is most.
	t.Run("no swap", func(t *testing.T) {
		memlockLimit = func() (uint64, error) { return 1 << 20, nil }
		lockMemory = func() error { return unix.EPERM }
		swapActive = func() bool { return false }
		harden()
		for _, n := range hardeningNotes() {
			if strings.Contains(n, "swap") {
				t.Errorf("hardeningNotes with no swap on = %q, want no note about swap", n)
			}
		}
	})
}
