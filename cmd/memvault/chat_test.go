package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// fakeMessages plays the Messages API: it answers in order with bodies, each a
// status and a JSON body, and keeps the request bodies.
type fakeMessages struct {
	mu      sync.Mutex
	replies [][2]string
	bodies  []string
	betas   []string // the anthropic-beta header of each request
}

func (f *fakeMessages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	f.bodies = append(f.bodies, string(b))
	f.betas = append(f.betas, r.Header.Get("anthropic-beta"))
	rep := [2]string{"500", `{"type":"error","error":{"type":"api_error","message":"unexpected request"}}`}
	if len(f.replies) > 0 {
		rep, f.replies = f.replies[0], f.replies[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-should-retry", "false")
	code := map[string]int{"200": 200, "400": 400, "401": 401, "500": 500}[rep[0]]
	w.WriteHeader(code)
	io.WriteString(w, rep[1])
}

func chatServer(t *testing.T, replies ...[2]string) *fakeMessages {
	f := &fakeMessages{replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("ANTHROPIC_MODEL", "")
	return f
}

func assistant(stop, content string) [2]string {
	return [2]string{"200", `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[` + content +
		`],"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`}
}

func TestChatPrint(t *testing.T) {
	f := chatServer(t,
		assistant("tool_use", `{"type":"tool_use","id":"toolu_c1","name":"memory","input":{"command":"create","path":"/memories/me.md","file_text":"Ada"}},`+
			`{"type":"tool_use","id":"toolu_c2","name":"memory","input":{"command":"view","path":"/nope"}}`),
		assistant("end_turn", `{"type":"text","text":"Saved."}`))
	cli := cliFor(initVault(t)...)
	stdout, code, stderr := cli("", "chat", "-p", "I am Ada.", "--model", "claude-x", "--session", "s9")
	if code != exitOK || stdout != "Saved.\n" {
		t.Fatalf("chat -p: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if want := "  memory: create /memories/me.md\n  memory: view /nope (Error: Path must start with /memories, got: /nope)\n"; stderr != want {
		t.Errorf("chat -p stderr = %q, want %q", stderr, want)
	}
	var first struct {
		Model string `json:"model"`
		Tools []struct{ Type string }
	}
	if err := json.Unmarshal([]byte(f.bodies[0]), &first); err != nil || first.Model != "claude-x" || first.Tools[0].Type != "memory_20250818" {
		t.Errorf("first request %s", f.bodies[0])
	}
	if !strings.Contains(f.bodies[1], `"tool_use_id":"toolu_c2","is_error":true`) {
		t.Errorf("second request lacks the error result: %s", f.bodies[1])
	}
	log, _, _ := cli("", "log", "--json")
	if !strings.Contains(log, `"tool_use_id":"toolu_c1","agent":"memvault-chat","session":"s9"`) {
		t.Errorf("memvault log --json = %s, want the create with its tool-use id", log)
	}
}

func TestChatErrors(t *testing.T) {
	chatServer(t, [2]string{"401", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
	cli := cliFor(initVault(t)...)
	_, code, stderr := cli("", "chat", "-p", "hi")
	if code != exitSetup || !strings.Contains(stderr, "authentication failed (401)") || strings.Contains(stderr, "sk-ant-test") {
		t.Errorf("chat with a refused key: status %d, stderr %q", code, stderr)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	if _, code, stderr := cli("", "chat", "-p", "hi"); code != exitSetup || !strings.Contains(stderr, "no API key") {
		t.Errorf("chat without a key: status %d, stderr %q", code, stderr)
	}
}

// TestChatLongSession: memvault chat -p asks for context editing and
// compaction, sends a compaction block back in the assistant content that held
// it, and continues a turn the API paused after compacting, so the person gets
// the answer; each flag leaves its edit and beta out.
func TestChatLongSession(t *testing.T) {
	compaction := `{"type":"compaction","content":"Ada is planning a trip.","encrypted_content":"enc_1","signature":"sig_1"}`
	f := chatServer(t,
		assistant("tool_use", compaction+`,{"type":"tool_use","id":"toolu_p1","name":"memory","input":{"command":"create","path":"/memories/trip.md","file_text":"Lisbon"}}`),
		assistant("compaction", `{"type":"compaction","content":"Ada goes to Lisbon.","encrypted_content":"enc_2","signature":"sig_2"}`),
		assistant("end_turn", `{"type":"text","text":"Lisbon it is."}`))
	cli := cliFor(initVault(t)...)
	stdout, code, stderr := cli("", "chat", "-p", "Plan my trip.")
	if code != exitOK || stdout != "Lisbon it is.\n" {
		t.Fatalf("chat -p: status %d, stdout %q, stderr %q; want the answer after the paused turn", code, stdout, stderr)
	}
	if want := "  context: compacted (the conversation so far is summarized)\n  memory: create /memories/trip.md\n" +
		"  context: compacted (the conversation so far is summarized)\n"; stderr != want {
		t.Errorf("chat -p stderr = %q, want %q", stderr, want)
	}
	if len(f.bodies) != 3 {
		t.Fatalf("the API got %d requests, want 3", len(f.bodies))
	}
	for i, b := range f.bodies {
		if !strings.Contains(b, `"type":"clear_tool_uses_20250919"`) || !strings.Contains(b, `"type":"compact_20260112"`) ||
			f.betas[i] != "context-management-2025-06-27,compact-2026-01-12" {
			t.Errorf("request %d (anthropic-beta %q) does not ask for both edits: %s", i, f.betas[i], b)
		}
	}
	var last struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(f.bodies[2]), &last); err != nil {
		t.Fatal(err)
	}
	var sent, want any
	if m := last.Messages; len(m) == 4 && len(m[1].Content) == 2 {
		_ = json.Unmarshal(m[1].Content[0], &sent)
	}
	_ = json.Unmarshal([]byte(compaction), &want)
	if m := last.Messages; len(m) != 4 || m[1].Role != "assistant" || !reflect.DeepEqual(sent, want) ||
		m[3].Role != "assistant" || !strings.Contains(string(m[3].Content[0]), `"encrypted_content":"enc_2"`) {
		t.Errorf("the request after the pause = %s\nwant the prompt, the compacted response, the result, the paused turn", f.bodies[2])
	}
	if cat, _, _ := cli("", "cat", "/memories/trip.md"); cat != "Lisbon" {
		t.Errorf("memvault cat /memories/trip.md = %q, want what the model wrote", cat)
	}

	for _, tc := range []struct {
		flag       string
		clear, cmp bool
	}{
		{"--no-compaction", true, false},
		{"--no-context-editing", false, true},
		{"--no-context-management", false, false},
	} {
		f := chatServer(t, assistant("end_turn", `{"type":"text","text":"ok"}`))
		if _, code, stderr := cli("", "chat", "-p", "hi", tc.flag); code != exitOK {
			t.Fatalf("chat %s: status %d, stderr %q", tc.flag, code, stderr)
		}
		b := f.bodies[0]
		if strings.Contains(b, "clear_tool_uses_20250919") != tc.clear || strings.Contains(b, "compact_20260112") != tc.cmp ||
			strings.Contains(f.betas[0], "compact-2026-01-12") != tc.cmp || !strings.Contains(f.betas[0], "context-management-2025-06-27") {
			t.Errorf("chat %s sent anthropic-beta %q, %s; want context editing %v, compaction %v", tc.flag, f.betas[0], b, tc.clear, tc.cmp)
		}
	}
}

// TestREPLPausedTurn: in the conversation a turn the API paused after
// compacting goes on to its answer, and the next prompt follows the compacted
// turn, whose compaction block goes back with it.
func TestREPLPausedTurn(t *testing.T) {
	f := &fakeMessages{replies: [][2]string{
		assistant("compaction", `{"type":"compaction","content":"Earlier: Ada's trip.","encrypted_content":"enc_r","signature":"sig_r"}`),
		assistant("end_turn", `{"type":"text","text":"Still on it."}`),
		assistant("end_turn", `{"type":"text","text":"Lisbon."}`),
	}}
	chat := testChat(t, f)
	var out, errOut strings.Builder
	if err := repl(context.Background(), chat, strings.NewReader("Go on.\nWhere to?\n"), &out, &errOut); err != nil {
		t.Fatalf("repl = %v", err)
	}
	if want := "Still on it.\n\nLisbon.\n\n"; out.String() != want {
		t.Errorf("repl wrote %q, want %q", out.String(), want)
	}
	if len(f.bodies) != 3 || !strings.Contains(f.bodies[2], `"encrypted_content":"enc_r"`) {
		t.Errorf("the API got %d requests, want 3, the last with the compaction block: %v", len(f.bodies), f.bodies)
	}
}
