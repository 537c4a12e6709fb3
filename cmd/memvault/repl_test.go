package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/claude"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestREPL: each line is a turn, a blank one is skipped, a failed turn is
// reported and the conversation goes on, and /quit ends it before the rest.
func TestREPL(t *testing.T) {
	f := &fakeMessages{replies: [][2]string{
		assistant("tool_use", `{"type":"tool_use","id":"toolu_r1","name":"memory","input":{"command":"create","path":"/memories/name.md","file_text":"Ada"}}`),
		assistant("end_turn", `{"type":"text","text":"I will remember, Ada."}`),
		{"400", `{"type":"error","error":{"type":"invalid_request_error","message":"boom"}}`},
		assistant("end_turn", `{"type":"text","text":"Your name is Ada."}`),
	}}
	chat := testChat(t, f)
	var out, errOut strings.Builder
	in := strings.NewReader("My name is Ada.\n\nfail please\nWhat is my name?\n/quit\nnever sent\n")
	if err := repl(context.Background(), chat, in, &out, &errOut); err != nil {
		t.Fatalf("repl = %v", err)
	}
	if want := "I will remember, Ada.\n\nYour name is Ada.\n\n"; out.String() != want {
		t.Errorf("repl wrote %q, want %q", out.String(), want)
	}
	if !strings.Contains(errOut.String(), "error: agent: claude: the API refused the request (400): boom") {
		t.Errorf("repl errors = %q, want the failed turn reported", errOut.String())
	}
	if len(f.bodies) != 4 {
		t.Errorf("the API got %d requests, want 4: two for the first turn, one each for the next two", len(f.bodies))
	}
}

// TestREPLEscapes: a reply or an API error that carries terminal escape
// sequences (a memory a remote wrote, echoed by the model) reaches the
// terminal as visible escapes, never as the sequences themselves.
func TestREPLEscapes(t *testing.T) {
	f := &fakeMessages{replies: [][2]string{
		assistant("end_turn", `{"type":"text","text":"a\u001b]0;owned\u0007\nb\u001b[2Kc\u202e"}`),
		{"400", `{"type":"error","error":{"type":"invalid_request_error","message":"bad\u001b[31m"}}`},
	}}
	chat := testChat(t, f)
	var out, errOut strings.Builder
	if err := repl(context.Background(), chat, strings.NewReader("hi\nagain\n"), &out, &errOut); err != nil {
		t.Fatalf("repl = %v", err)
	}
	if want := `a\x1b]0;owned\a` + "\n" + `b\x1b[2Kc\u202e` + "\n\n"; out.String() != want {
		t.Errorf("repl wrote %q, want %q", out.String(), want)
	}
	if strings.ContainsAny(errOut.String(), "\x1b") || !strings.Contains(errOut.String(), `bad\x1b[31m`) {
		t.Errorf("repl errors = %q, want the escape shown as \\x1b", errOut.String())
	}
}

// testChat is a chat with a new vault, through a local server playing the API
// with f's replies.
func testChat(t *testing.T, f *fakeMessages) *claude.Chat {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-test"), option.WithMaxRetries(2))
	h := agent.New(agent.Vault(vaulttest.New(t)), agent.Options{Agent: "memvault-chat", Session: "s1"})
	return claude.NewChat(client, h, claude.ChatOptions{})
}
