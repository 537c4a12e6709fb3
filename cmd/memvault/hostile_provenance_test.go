package main

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestHostileBlameGrepEscaped: blame and grep once printed a collaborator's
// file contents and trailers as they came, so a Tool-Use-Id of
// "toolu_\x1b]0;pwned\a" retitled the victim's terminal, and through a pipe
// (memvault grep x | less -R) every control passed. Every field they print
// is escaped, to a pipe too; --json escapes C1 and bidi controls; grep -l
// quotes a name as log does. The commit is written with git plumbing.
func TestHostileBlameGrepEscaped(t *testing.T) {
	v := newVictim(t)
	h := v.collaborator(t, v.url)
	head := h.Head()
	tree := h.Set(head+"^{tree}", "memories/notes.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(v.encrypt(t, hostileContent))})
	msg := "create /memories/notes.md\n\n" +
		"Memory-Command: create\x1b[31m\n" +
		"Memory-Path: /memories/notes.md\n" +
		"Tool-Use-Id: toolu_\x1b]0;pwned\a\n" +
		"Agent: mallory\u202eyrollam\n" +
		"Session: s\u009b2J\x1b[2K\r\n"
	h.Push(rawCommit(h, tree, head, "mallory", msg))
	v.must(t, "", "sync")

	blame := v.must(t, "", "blame", "notes.md")
	checkNoRaw(t, "blame", blame)
	for _, want := range []string{`"toolu_\x1b]0;pwned\a"`, `"mallory\u202eyrollam"`, `"s\u009b2J\x1b[2K\r"`,
		`"create\x1b[31m"`, `\x1b[2K\rforged\x1b]0;pwned\a`, `\u202eevil\u009b31m`} {
		if !strings.Contains(blame, want) {
			t.Errorf("blame = %s\nwant it to show %s", blame, want)
		}
	}
	if n := strings.Count(blame, "\n"); n != 3 {
		t.Errorf("blame printed %d lines for a file of 3, want 3:\n%s", n, blame)
	}
	js := v.must(t, "", "blame", "notes.md", "--json")
	checkNoRaw(t, "blame --json", js)
	if !strings.Contains(js, `\u202eevil\u009b31m`) || !strings.Contains(js, `"agent":"mallory\u202eyrollam"`) {
		t.Errorf("blame --json = %s\nwant the bidi and C1 controls as \\u escapes", js)
	}

	grep := v.must(t, "", "grep", "-n", "forged|evil")
	checkNoRaw(t, "grep", grep)
	if !strings.Contains(grep, `/memories/notes.md:2:\x1b[2K\rforged\x1b]0;pwned\a`) {
		t.Errorf("grep = %s\nwant the matching line escaped", grep)
	}
	js = v.must(t, "", "grep", "evil", "--json")
	checkNoRaw(t, "grep --json", js)
	if !strings.Contains(js, `\u202eevil\u009b31m`) {
		t.Errorf("grep --json = %s\nwant the bidi and C1 controls as \\u escapes", js)
	}

	// A name that reverses what follows it: admission refuses one, a vault
	// damaged by hand can hold one.
	d := v.collaborator(t, v.dir)
	head = d.Head()
	tree = d.Set(head+"^{tree}", "memories/a\u202egpj.md", gittest.TreeEntry{Mode: "100644", Hash: d.Blob(v.encrypt(t, "needle\n"))})
	d.Push(d.Commit(tree, "create\n\nMemory-Command: create\n", head))
	names := v.must(t, "", "grep", "-l", "needle")
	checkNoRaw(t, "grep -l", names)
	if names != `"/memories/a\u202egpj.md"`+"\n" {
		t.Errorf("grep -l = %q, want the name quoted as log quotes it", names)
	}
}
