package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestSyncProgressLines: on a terminal, sync shows one progress line per
// phase (what it receives, what it sends, the server's own messages), each
// ended before the next message; on a pipe it shows none. How the lines are
// kept apart when the server's messages come between the pack's bytes, or an
// error ends a transfer, is gitlog's TestProgressLines.
func TestSyncProgressLines(t *testing.T) {
	v := newVictim(t)
	h := v.collaborator(t, v.url)
	h.Change("memories/theirs.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(v.encrypt(t, "from the other clone\n"))}, "create /memories/theirs.md\n")
	v.must(t, `{"command":"create","path":"/memories/mine.md","file_text":"mine\n"}`, "tool")

	master, tty := openPTY(t)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master)
		got <- b
	}()
	var stdout bytes.Buffer
	code := run(context.Background(), append(v.flags, "sync"), strings.NewReader(""), &stdout, tty)
	tty.Close()
	out := string(<-got)
	if code != exitOK {
		t.Fatalf("memvault sync on a terminal: status %d\n%s", code, out)
	}
	for _, phase := range []string{"Receiving ", "Sending "} {
		if !strings.Contains(out, phase) {
			t.Errorf("sync on a terminal showed no %q line:\n%q", phase, out)
		}
	}
	// A size is followed by ", done.", or by the end of its line, or by a
	// carriage return that redraws it: never by another message.
	if runOn := regexp.MustCompile(`[0-9] (bytes|KiB|MiB)[^,\r\n]`).FindString(out); runOn != "" {
		t.Errorf("a progress line runs into the next message at %q:\n%q", runOn, out)
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "objects: ") && !strings.HasSuffix(line, ", done.\n") && !strings.HasSuffix(line, "\r\n") {
			t.Errorf("progress line %q does not end as done", line)
		}
	}

	// On a pipe: the same sync shows no progress.
	h = v.collaborator(t, v.url)
	h.Change("memories/theirs.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(v.encrypt(t, "again\n"))}, "str_replace /memories/theirs.md\n")
	v.must(t, `{"command":"create","path":"/memories/mine2.md","file_text":"mine\n"}`, "tool")
	var piped bytes.Buffer
	if code := run(context.Background(), append(v.flags, "sync"), strings.NewReader(""), &stdout, &piped); code != exitOK {
		t.Fatalf("memvault sync on a pipe: status %d\n%s", code, piped.String())
	}
	if s := piped.String(); strings.Contains(s, "objects: ") || strings.Contains(s, "\r") {
		t.Errorf("sync on a pipe showed progress:\n%q", s)
	}
}
