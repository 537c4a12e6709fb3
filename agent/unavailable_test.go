package agent_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
)

const downReason = "Error: memvault could not start: the vault is damaged.\nRun memvault fsck --repair."

// TestServeUnavailable: every line, a blank, malformed or over-long one too, gets
// the reason as an error answer with its id, in order, until the input ends.
func TestServeUnavailable(t *testing.T) {
	long := `{"id":"big","input":{"command":"create","path":"/memories/x","file_text":"` +
		strings.Repeat("x", agent.DefaultMaxLine) + `"}}`
	in := strings.Join([]string{
		`{"id":1,"input":{"command":"view","path":"/memories"}}`,
		``,
		`{"id":{"n":[2]},"input":{"command":"create","path":"/memories/a","file_text":"a"}}`,
		`not json`,
		long,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := agent.ServeUnavailable(context.Background(), downReason, strings.NewReader(in), &out); err != nil {
		t.Fatalf("ServeUnavailable = %v", err)
	}
	answer := `,"content":"Error: memvault could not start: the vault is damaged.\nRun memvault fsck --repair.","is_error":true}`
	want := `{"id":1` + answer + "\n" + `{"id":null` + answer + "\n" + `{"id":{"n":[2]}` + answer + "\n" + `{"id":null` + answer + "\n" + `{"id":"big"` + answer + "\n"
	if out.String() != want {
		t.Errorf("ServeUnavailable wrote\n%s\nwant\n%s", out.String(), want)
	}
}
