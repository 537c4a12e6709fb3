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
