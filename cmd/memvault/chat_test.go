package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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
}

func (f *fakeMessages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := io.ReadAll(r.Body)
	f.bodies = append(f.bodies, string(b))
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
