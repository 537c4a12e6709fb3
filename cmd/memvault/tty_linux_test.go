package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// demoOnTerminal runs memvault demo on a terminal, answers its question
// about the UI with answer, quits the UI if it opens, and returns all the
// terminal showed.
func demoOnTerminal(t *testing.T, answer string) string {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	master, tty := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		asked, quit := false, false
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if !asked && strings.Contains(out.String(), "[Y/n] ") {
				asked = true
				master.Write([]byte(answer + "\r"))
			}
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
	if code := run(ctx, []string{"demo"}, tty, tty, &stderr); code != exitOK {
		t.Errorf("memvault demo on a terminal (answering %q): status %d, stderr %s", answer, code, stderr.String())
	}
	tty.Close()
	<-done
	return out.String()
}

// TestDemoOnTerminal: on a terminal the demo tells its story first and then
// asks before it opens the UI, which once opened at once over the transcript,
// so the story was not seen until it was quit. The transcript must not say
// the vault is removed before the UI opens on it; it once said "The demo vault
// is removed now" just above "Opening the terminal UI on the demo vault".
func TestDemoOnTerminal(t *testing.T) {
	t.Run("yes", func(t *testing.T) {
		got := demoOnTerminal(t, "")
		opening := strings.Index(got, "Opening the terminal UI on the demo vault")
		if opening < 0 {
			t.Fatalf("memvault demo on a terminal, answered with enter, did not open the UI; it printed\n%s", tail(got))
		}
		before := got[:opening]
		for _, want := range []string{"Session 3 of 3", "One undo", "What the disk holds", "[Y/n] ", "The demo vault is removed when you quit the UI"} {
			if !strings.Contains(before, want) {
				t.Errorf("memvault demo on a terminal shows no %q before it opens the UI:\n%s", want, tail(before))
			}
		}
		if strings.Contains(before, "removed now") {
			t.Errorf("memvault demo on a terminal says the vault is removed before opening the UI on it:\n%s", tail(before))
		}
	})
	t.Run("no", func(t *testing.T) {
		got := demoOnTerminal(t, "n")
		if strings.Contains(got, "Opening the terminal UI") {
			t.Errorf("memvault demo on a terminal, answered n, opened the UI:\n%s", tail(got))
		}
		if !strings.Contains(got, "The demo vault is removed now") || !strings.Contains(got, "memvault init") {
			t.Errorf("memvault demo on a terminal, answered n, does not end with what to run next:\n%s", tail(got))
		}
	})
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
