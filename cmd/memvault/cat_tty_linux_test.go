package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/memvault/memvault/gitlog/gittest"
)

// openPTY opens a new pseudo-terminal and returns its two ends.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Raw: the terminal passes the bytes through as written (no "\n" to "\r\n").
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// TestCatOnTerminalEscapes: a memory file a collaborator wrote to
// drive the terminal is printed escaped when cat writes to a real terminal,
// and exactly when it writes to a pipe (TestHostileHistoryEscaped).
func TestCatOnTerminalEscapes(t *testing.T) {
	v := newVictim(t)
	h := v.collaborator(t, v.url)
	h.Change("memories/notes.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(v.encrypt(t, hostileContent))}, "str_replace /memories/notes.md\n")
	v.must(t, "", "sync")

	master, tty := openPTY(t)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master) // EIO once the terminal's side is closed and read out
		got <- b
	}()
	var stderr bytes.Buffer
	code := run(context.Background(), append(v.flags, "cat", "notes.md"), strings.NewReader(""), tty, &stderr)
	tty.Close()
	out := string(<-got)
	if code != exitOK {
		t.Fatalf("memvault cat on a terminal: status %d, %s", code, stderr.String())
	}
	checkNoRaw(t, "cat on a terminal", out)
	if want := `\x1b[2K\rforged\x1b]0;pwned\a`; !strings.Contains(out, want) {
		t.Errorf("cat on a terminal printed %q, want it to show %s", out, want)
	}
}
