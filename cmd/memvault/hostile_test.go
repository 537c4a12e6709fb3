package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault/keys"
)

// What a remote writes (names, subjects, trailers, authors, recipient
// comments, contents) reaches the victim's terminal escaped. The hostile objects
// are written with git plumbing and by hand, never through memvault.

// rawTerminal are the bytes an attacker uses to drive a terminal: CSI and OSC
// sequences, a carriage return that overwrites a line, the C1 CSI, bell, and
// bidi overrides and isolates.
var rawTerminal = []string{"\x1b", "\r", "\a", "\u009b", "\u0085", "\u202e", "\u2066", "\xff"}

// checkNoRaw fails if out holds any of rawTerminal (a carriage return that
// ends a line, as in a CRLF file, moves nothing).
func checkNoRaw(t *testing.T, what, out string) {
	t.Helper()
	out = strings.ReplaceAll(out, "\r\n", "\n")
	for _, bad := range rawTerminal {
		if strings.Contains(out, bad) {
			t.Errorf("%s printed %q raw:\n%s", what, bad, out)
		}
	}
}

// victim is a vault with one memory file, pushed to a git daemon.
type victim struct {
	cli       func(stdin string, args ...string) (string, int, string)
	flags     []string // --vault DIR --identity FILE
	dir, url  string
	identity  string
	recipient string
}

func newVictim(t *testing.T) *victim {
	t.Helper()
	root := t.TempDir()
	v := &victim{dir: filepath.Join(root, "vault.git"), url: gittest.Daemon(t)}
	v.identity = filepath.Join(root, "identity")
	v.flags = []string{"--vault", v.dir, "--identity", v.identity}
	v.cli = cliFor(v.flags...)
	// Plain: the hostile commits are made with git at plain names, which a
	// sealed vault refuses first as names that do not open (vault's
	// admit_sealed_test.go runs the hostile remote against sealed vaults).
	v.must(t, "", "init", "--plain")
	v.must(t, `{"command":"create","path":"/memories/notes.md","file_text":"hello\n"}`, "tool")
	v.must(t, "", "remote", "add", "origin", v.url)
	v.must(t, "", "sync")
	v.recipient = strings.TrimSpace(v.must(t, "", "identity", "show"))
	return v
}

// collaborator is a hostile clone of the victim's remote whose commits are
// signed with the victim's own signing key: a writer gone bad, whom the
// signature check lets through, so that what the test sends is judged by the
// checks after it.
func (v *victim) collaborator(t *testing.T, url string) *gittest.Hostile {
	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(v.identity)
	return h
}

// must runs memvault and wants status 0.
func (v *victim) must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, code, stderr := v.cli(stdin, args...)
	if code != exitOK {
		t.Fatalf("memvault %s: status %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// encrypt encrypts plain to the victim's key, as any collaborator can.
func (v *victim) encrypt(t *testing.T, plain string) []byte {
	t.Helper()
	r, err := age.ParseX25519Recipient(v.recipient)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, err := age.Encrypt(&b, r)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(plain))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rawCommit writes a commit object by hand, so that its author line and
// message hold what git's porcelain would not write.
func rawCommit(h *gittest.Hostile, tree, parent, author, msg string) string {
	return h.Loose("commit", fmt.Appendf(nil, "tree %s\nparent %s\nauthor %s <m@example.invalid> 1767225600 +0000\n"+
		"committer mallory <m@example.invalid> 1767225600 +0000\n\n%s", tree, parent, author, msg))
}

// hostileContent is a memory file a collaborator wrote to erase the victim's
// screen, retitle the terminal and reverse what follows.
const hostileContent = "line one\n\x1b[2K\rforged\x1b]0;pwned\a\n\u202eevil\u009b31m\r\n"

// TestHostileHistoryEscaped: a commit that sync admits (its tree is sound) with
// a subject, trailers, author and content meant for the victim's terminal.
// log, show, diff, sync and cat print all of it escaped.
func TestHostileHistoryEscaped(t *testing.T) {
	v := newVictim(t)
	h := v.collaborator(t, v.url)
	head := h.Head()
	tree := h.Set(head+"^{tree}", "memories/notes.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(v.encrypt(t, hostileContent))})
	msg := "create /memories/notes.md\x1b[2K\r(nothing happened)\u202e\n\n" +
		"Memory-Command: create\x1b[31m\n" +
		"Memory-Path: /memories/notes.md\r/memories/harmless.md\n" +
		"Tool-Use-Id: toolu_\x1b]0;pwned\a\n" +
		"Agent: mallory\u202eyrollam\n" +
		"Session: s\u009b2J\n" +
		"Memory-Source: \x1b[1A\x1b[2Kabcdef0\n"
	h.Push(rawCommit(h, tree, head, "mal\x1b[2Klory", msg))

	out := v.must(t, "", "sync")
	checkNoRaw(t, "sync", out)
	if !strings.Contains(out, "fast-forward") {
		t.Fatalf("sync = %q, want a fast-forward to the hostile commit", out)
	}
	log := v.must(t, "", "log", "-n", "1")
	checkNoRaw(t, "log", log)
	for _, want := range []string{`"create\x1b[31m"`, `"/memories/notes.md\r/memories/harmless.md"`, `"toolu_\x1b]0;pwned\a"`, `from "\x1b[1A\x1b`} {
		if !strings.Contains(log, want) {
			t.Errorf("log = %q, want it to show %s", log, want)
		}
	}
	if n := strings.Count(log, "\n"); n != 1 {
		t.Errorf("log -n 1 printed %d lines, want 1:\n%s", n, log)
	}
	show := v.must(t, "", "show", "main")
	checkNoRaw(t, "show", show)
	for _, want := range []string{
		`Author: "mal\x1b[2Klory"`,
		`"create /memories/notes.md\x1b[2K\r(nothing happened)\u202e"`,
		`Agent: "mallory\u202eyrollam"`,
		`Session: "s\u009b2J"`,
		`+\x1b[2K\rforged\x1b]0;pwned\a`,
		`+\u202eevil\u009b31m`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("show = %s\nwant it to hold %s", show, want)
		}
	}
	diff := v.must(t, "", "diff")
	checkNoRaw(t, "diff", diff)
	if !strings.Contains(diff, `+\x1b[2K\rforged`) {
		t.Errorf("diff = %s\nwant the content's controls escaped", diff)
	}
	// Piped, cat gives the bytes exactly: a script reads the file as written.
	if got := v.must(t, "", "cat", "notes.md"); got != hostileContent {
		t.Errorf("cat to a pipe = %q, want the exact bytes %q", got, hostileContent)
	}
	// JSON is escaped by its encoding and carries the values exactly.
	js := v.must(t, "", "log", "-n", "1", "--json")
	checkNoRaw(t, "log --json", js)
	if !strings.Contains(js, `"tool_use_id":"toolu_\u001b]0;pwned\u0007"`) {
		t.Errorf("log --json = %s, want the exact tool-use id, JSON-escaped", js)
	}
}

// TestDamagedNamesEscaped: names that sync's admission refuses (a newline, an
// escape sequence, a bidi override) can still be in a vault damaged by hand,
// or written before the check existed: here they are written straight into
// the victim's repository with git plumbing, with a checkpoint tag of the
// same kind, and its config gets a remote whose name holds an escape
// sequence. show, diff, checkpoints and remote list print them quoted,
// escaped, one line each.
func TestDamagedNamesEscaped(t *testing.T) {
	v := newVictim(t)
	h := v.collaborator(t, v.dir) // the victim's own vault, pushed to directly
	head := h.Head()
	name := "evil\x1b[2K\rname\nA /memories/fake.md\u202e.md"
	tree := h.Set(head+"^{tree}", "memories/"+name, gittest.TreeEntry{Mode: "100644", Hash: h.Blob(v.encrypt(t, "x\n"))})
	h.Push(h.Commit(tree, "create\n\nMemory-Command: create\n", head))
	quoted := `"/memories/evil\x1b[2K\rname\nA /memories/fake.md\u202e.md"`

	show := v.must(t, "", "show", "main")
	checkNoRaw(t, "show", show)
	for _, want := range []string{"  A " + quoted + "\n", "--- /dev/null\n+++ " + quoted + "\n"} {
		if !strings.Contains(show, want) {
			t.Errorf("show = %s\nwant it to hold %q", show, want)
		}
	}
	if strings.Contains(show, "\nA /memories/fake.md") {
		t.Errorf("show = %s\na name's newline forged a line", show)
	}
	diff := v.must(t, "", "diff")
	checkNoRaw(t, "diff", diff)
	if !strings.HasPrefix(diff, "--- /dev/null\n+++ "+quoted+"\n") {
		t.Errorf("diff = %q, want its header to name the file quoted", diff)
	}

	// A checkpoint (an annotated tag) whose name reverses text and whose
	// message erases a line: git allows both in a ref and a tag. The tagger is
	// given, as a machine with no git config has none.
	if out, err := exec.Command(gittest.Git(t), "--git-dir", v.dir, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "tag", "-a", "cp\u202eevil", "-m", "kept\x1b[2K\rfine", "main").CombinedOutput(); err != nil {
		t.Fatalf("git tag: %v\n%s", err, out)
	}
	cps := v.must(t, "", "checkpoints")
	checkNoRaw(t, "checkpoints", cps)
	if !strings.Contains(cps, `"cp\u202eevil"`) || !strings.Contains(cps, `"kept\x1b[2K\rfine"`) {
		t.Errorf("checkpoints = %q, want the name and message quoted", cps)
	}

	if out, err := exec.Command(gittest.Git(t), "--git-dir", v.dir, "config", "remote.evil\x1b[31m\u202e.url", "file:///nowhere\x1b[2K").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	remotes := v.must(t, "", "remote", "list")
	checkNoRaw(t, "remote list", remotes)
	if !strings.Contains(remotes, `"evil\x1b[31m\u202e"`+"\t"+`"file:///nowhere\x1b[2K"`) {
		t.Errorf("remote list = %q, want the remote's name and URL quoted", remotes)
	}
}

// TestProgressWriterEscapes: a git server's own messages reach the
// terminal as progress; escape sequences in them are escaped, while the
// carriage returns and newlines that progress lines are made of stay.
func TestProgressWriterEscapes(t *testing.T) {
	var b bytes.Buffer
	w := progressWriter{&b}
	for _, chunk := range []string{"Counting objects:  50%\r", "Counting objects: 100%\n", "remote: hook \x1b[2K\x1b]0;pwned\a", " says \u202ehi\n"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", chunk, n, err, len(chunk))
		}
	}
	want := "Counting objects:  50%\rCounting objects: 100%\nremote: hook \\x1b[2K\\x1b]0;pwned\\a says \\u202ehi\n"
	if b.String() != want {
		t.Errorf("progress = %q, want %q", b.String(), want)
	}
}
