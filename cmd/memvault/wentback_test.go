package main

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestSyncSaysRemoteWentBack: the host puts the remote's main back; sync
// says so, and that it pushed main again.
func TestSyncSaysRemoteWentBack(t *testing.T) {
	v := newVictim(t)
	h := gittest.NewHostile(t, v.url)
	old := h.Head()
	v.must(t, `{"command":"create","path":"/memories/later.md","file_text":"later\n"}`, "tool")
	v.must(t, "", "sync")
	h.Git("update-ref", "refs/heads/main", old)
	h.Git("push", "-q", "--force", v.url, "refs/heads/main:refs/heads/main")
	out := v.must(t, "", "sync")
	if !strings.Contains(out, "The remote went backwards: it no longer holds ") || !strings.Contains(out, "This sync pushed main again") {
		t.Errorf("sync printed\n%s\nwant it to say the remote went backwards and was put back", out)
	}
}

// TestLogMarksTrailerThatLies: a collaborator's commit changed secret.md and
// said "str_replace /memories/notes.md"; log, log of secret.md, blame and show
// mark it, naming the file the tree changed.
func TestLogMarksTrailerThatLies(t *testing.T) {
	v := newVictim(t)
	v.must(t, `{"command":"create","path":"/memories/secret.md","file_text":"secret\n"}`, "tool")
	v.must(t, "", "sync")
	h := v.collaborator(t, v.url)
	notes := h.Git("rev-parse", h.Head()+":memories/notes.md")
	tree := h.Set(h.Head()+"^{tree}", "memories/secret.md", gittest.TreeEntry{Mode: "100644", Hash: notes})
	h.Push(h.Commit(tree, "str_replace /memories/notes.md\n\nMemory-Command: str_replace\nMemory-Path: /memories/notes.md\nTool-Use-Id: toolu_0001\n", h.Head()))
	v.must(t, "", "sync")
	const mark = "[NOT WHAT THE TREE SAYS: it changed /memories/secret.md]"
	for _, args := range [][]string{{"log", "-n", "1"}, {"log", "/memories/secret.md", "-n", "1"}} {
		if out := v.must(t, "", args...); !strings.Contains(out, "toolu_0001  "+mark) {
			t.Errorf("memvault %v printed\n%s\nwant the commit marked %q", args, out, mark)
		}
	}
	if out := v.must(t, "", "blame", "/memories/secret.md"); !strings.Contains(out, "str_replace!") || !strings.Contains(out, "not to be believed") {
		t.Errorf("blame printed\n%s\nwant the commit marked", out)
	}
	if out := v.must(t, "", "show", "main"); !strings.Contains(out, "NOT WHAT THE TREE SAYS: it changed /memories/secret.md: the trailers above") {
		t.Errorf("show printed\n%s\nwant the commit marked", out)
	}
}
