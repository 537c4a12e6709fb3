package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestDemoOnTerminalOrder: on a terminal the demo ends in the UI on its
// vault, so the transcript must not say the vault is removed before the UI
// opens on it; it once said "The demo vault is removed now" just above
// "Opening the terminal UI on the demo vault".
func TestDemoOnTerminalOrder(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	master, tty := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		quit := false
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if !quit && strings.Contains(out.String(), "Opening the terminal UI") {
				// The UI is open: what came before it is what the test reads.
				// It is quit with its own key, as a person would: a UI ended
				// by cancelling its context is killed, and Bubble Tea then
				// closes its input reader without waiting for the goroutine
				// still reading it (charmbracelet/bubbletea#1599), which the
				// race detector reports.
				quit = true
				master.Write([]byte("q"))
			}
			if err != nil {
				return
			}
		}
	}()
	var stderr bytes.Buffer
	run(ctx, []string{"demo"}, tty, tty, &stderr)
	tty.Close()
	<-done
	got := out.String()
	opening := strings.Index(got, "Opening the terminal UI on the demo vault")
	if opening < 0 {
		t.Fatalf("memvault demo on a terminal did not open the UI; it printed\n%s\nstderr: %s", tail(got), stderr.String())
	}
	before := got[:opening]
	if strings.Contains(before, "removed now") {
		t.Errorf("memvault demo on a terminal says the vault is removed before opening the UI on it:\n%s", tail(before))
	}
	if !strings.Contains(before, "The demo vault is removed when you quit the UI") {
		t.Errorf("memvault demo on a terminal does not say when its vault is removed:\n%s", tail(before))
	}
}

// tail is the end of a long transcript, enough to see what went wrong.
func tail(s string) string { return s[max(0, len(s)-600):] }

// TestExportTarNotToTerminal: `export -` writes a tar stream; on a terminal it
// once printed the raw archive, headers and plaintext, to the screen. It is
// refused, as tar refuses, with nothing decrypted and nothing written there.
func TestExportTarNotToTerminal(t *testing.T) {
	root := t.TempDir()
	cli := cliFor("--vault", root+"/vault.git", "--identity", root+"/identity")
	if _, code, stderr := cli("", "init"); code != exitOK {
		t.Fatalf("memvault init: status %d, %s", code, stderr)
	}
	if _, code, stderr := cli(`{"command":"create","path":"/memories/secret.md","file_text":"plaintext-marker\n"}`, "tool"); code != exitOK {
		t.Fatalf("memvault tool create: status %d, %s", code, stderr)
	}
	master, tty := openPTY(t)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master)
		got <- b
	}()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--vault", root + "/vault.git", "--identity", root + "/identity", "export", "-"},
		strings.NewReader(""), tty, &stderr)
	tty.Close()
	out := <-got
	if code != exitSetup {
		t.Errorf("memvault export - on a terminal: status %d, want %d", code, exitSetup)
	}
	if len(out) != 0 {
		t.Errorf("memvault export - wrote %q to the terminal, want nothing", tail(string(out)))
	}
	if !strings.Contains(stderr.String(), "refusing to write a tar stream to a terminal") {
		t.Errorf("memvault export - on a terminal said %q, want it to refuse the terminal", stderr.String())
	}
}
