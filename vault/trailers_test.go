package vault

import (
	"slices"
	"testing"
)

// TestMessageRoundTrip pins the one codec of commit messages: what formatMessage
// writes, parseMessage reads back, and no value can add a line of its own.
func TestMessageRoundTrip(t *testing.T) {
	meta := Meta{Command: "rename", ToolUseID: "toolu_1", Agent: "a\nMemory-Command: delete", Session: "s"}
	tr := append(metaTrailers(meta, "/memories/a", "/memories/b"), trailer{trConflict, "/memories/x"}, trailer{trConflict, "/memories/y"})
	msg := formatMessage("rename /memories/a -> /memories/b\nforged", tr)
	subject, got := parseMessage(msg)
	if subject != "rename /memories/a -> /memories/b forged" {
		t.Errorf("subject = %q", subject)
	}
	want := []trailer{
		{trCommand, "rename"}, {trPath, "/memories/a"}, {trNewPath, "/memories/b"},
		{trToolUseID, "toolu_1"}, {trAgent, "a Memory-Command: delete"}, {trSession, "s"},
		{trConflict, "/memories/x"}, {trConflict, "/memories/y"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseMessage(%q) trailers = %q, want %q", msg, got, want)
	}
	if c := trailerValue(got, trCommand); c != "rename" {
		t.Errorf("trailerValue(Memory-Command) = %q, want rename", c)
	}
}
