package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
)

// TestHostileNamesEscaped: a vault damaged by hand, with git
// plumbing, holds a file whose name erases a line, starts a new one and
// reverses text, in a commit whose author and trailers do the same. Every
// frame shows them escaped, as the CLI does, and keeps its line count.
func TestHostileNamesEscaped(t *testing.T) {
	// Plain: the hostile name and message are written in the clear with git,
	// which a sealed vault would not open at all.
	v, _ := newVaultFormat(t, false)
	write(t, v, vault.Meta{Command: "create"}, "/memories/a.md", "hello\n")
	if err := v.Flush(context.Background()); err != nil { // for git to see its objects
		t.Fatal(err)
	}
	h := gittest.NewHostile(t, v.Dir())
	head := h.Head()
	var blob string
	for _, e := range h.ReadTree(head + ":memories") {
		if e.Name == "a.md" {
			blob = e.Hash
		}
	}
	name := "evil\x1b[2K\rname\nfake\u202e.md"
	tree := h.Set(head+"^{tree}", "memories/"+name, gittest.TreeEntry{Mode: "100644", Hash: blob})
	msg := "create\x1b]0;pwned\a\n\nMemory-Command: create\x1b[31m\nMemory-Path: /memories/" + name[:13] +
		"\nTool-Use-Id: toolu\u009b2J\nAgent: mallory\u202eyrollam\nSession: s\r-2\n"
	h.Push(h.Loose("commit", fmt.Appendf(nil, "tree %s\nparent %s\nauthor mal\x1b[2Klory <m@example.invalid> 1772360000 +0000\n"+
		"committer mallory <m@example.invalid> 1772360000 +0000\n\n%s", tree, head, msg)))

	const width, height = 200, 40
	d := newDriver(t, v, width, height)
	check := func(what string, want ...string) {
		t.Helper()
		view := d.m.View().Content
		for _, bad := range []string{"\x1b[2K", "\x1b]0;", "\x1b[31m", "\a", "\r", "\u009b", "\u202e"} {
			if strings.Contains(view, bad) {
				t.Errorf("%s: the frame holds %q from the repository", what, bad)
			}
		}
		if n := strings.Count(view, "\n") + 1; n != height {
			t.Errorf("%s: the frame has %d lines, want %d: a name forged a line", what, n, height)
		}
		frame := d.frame()
		for _, w := range want {
			if !strings.Contains(frame, w) {
				t.Errorf("%s: the frame does not show %s:\n%s", what, w, frame)
			}
		}
	}
	check("the tree", `evil\x1b[2K\rname\nfake\u202e.md`)
	d.keys("tab", "j")
	check("the history", `create\x1b[31m`, `mallory\u20`, `toolu\u009b2J`, "unsigned")
	d.keys("k")
	check("the commit", `/memories/evil\x1b[2K\rname`, `mallory\u202eyrollam`, `s\r-2`)
}
