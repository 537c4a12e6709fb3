package claude_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/claude"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// apiRequest is one request the fake Messages API received.
type apiRequest struct {
	Header http.Header
	Body   struct {
		Model             string            `json:"model"`
		MaxTokens         int64             `json:"max_tokens"`
		Tools             []json.RawMessage `json:"tools"`
		ContextManagement json.RawMessage   `json:"context_management"`
		Messages          []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
}

// apiReply is what the fake answers to one request.
type apiReply struct {
	status int
	header map[string]string
	body   string
}

// fakeAPI plays the Messages API: it answers requests with replies in order
// and keeps the requests for the test to check.
type fakeAPI struct {
	t       *testing.T
	mu      sync.Mutex
	replies []apiReply
	got     []apiRequest
}

func newFakeAPI(t *testing.T, replies ...apiReply) (*fakeAPI, anthropic.Client) {
	f := &fakeAPI{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-test"), option.WithMaxRetries(2))
	return f, client
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var req apiRequest
	req.Header = r.Header.Clone()
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.URL.Path != "/v1/messages" || json.Unmarshal(body, &req.Body) != nil {
		f.t.Errorf("fake API got %s %s %s", r.Method, r.URL, body)
	}
	f.got = append(f.got, req)
	if len(f.replies) == 0 {
		f.t.Errorf("fake API: request %d was not expected", len(f.got))
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"no more replies"}}`, 500)
		return
	}
	rep := f.replies[0]
	f.replies = f.replies[1:]
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", fmt.Sprintf("req_%d", len(f.got)))
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (f *fakeAPI) requests() []apiRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiRequest(nil), f.got...)
}

// message is a 200 reply holding an assistant message with the given content
// blocks (JSON) and stop reason.
func message(stop string, blocks ...string) apiReply {
	return apiReply{status: 200, body: `{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-6",` +
		`"content":[` + strings.Join(blocks, ",") + `],"stop_reason":"` + stop + `","stop_sequence":null,` +
		`"usage":{"input_tokens":12,"output_tokens":34},"context_management":{"applied_edits":[]}}`}
}

func textBlock(s string) string {
	b, _ := json.Marshal(s)
	return `{"type":"text","text":` + string(b) + `}`
}

func toolUse(id, input string) string {
	return `{"type":"tool_use","id":"` + id + `","name":"memory","input":` + input + `}`
}

func apiFailure(status int, typ, msg string, header map[string]string) apiReply {
	return apiReply{status: status, header: header,
		body: `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`}
}

// toolResult is a tool_result block as the model receives it.
type toolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func newChat(t *testing.T, client anthropic.Client, opts claude.ChatOptions) (*claude.Chat, *vault.Vault) {
	v := vaulttest.New(t)
	return claude.NewChat(client, agent.New(agent.Vault(v), agent.Options{Agent: "memvault-chat", Session: "s1"}), opts), v
}

// TestChatTurn runs a turn whose first response holds four memory calls that
// must run in order (the third edits what the second creates; the fourth is an
// error answer), and checks everything memvault sent and committed.
func TestChatTurn(t *testing.T) {
	calls := []struct{ id, input, want string }{
		{"toolu_01", `{"command":"view","path":"/memories"}`,
			"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"},
		{"toolu_02", `{"command":"create","path":"/memories/todo.md","file_text":"- buy milk\n"}`,
			"File created successfully at: /memories/todo.md"},
		{"toolu_03", `{"command":"str_replace","path":"/memories/todo.md","old_str":"milk","new_str":"oat milk"}`,
			"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t- buy oat milk\n     2\t"},
		{"toolu_04", `{"command":"view","path":"/memories/gone.md"}`,
			"Error: The path /memories/gone.md does not exist. Please provide a valid path."},
	}
	blocks := []string{textBlock("Let me check my memory.")}
	for _, c := range calls {
		blocks = append(blocks, toolUse(c.id, c.input))
	}
	api, client := newFakeAPI(t, message("tool_use", blocks...), message("end_turn", textBlock("Noted: oat milk.")))
	var seen []string
	chat, v := newChat(t, client, claude.ChatOptions{Model: "claude-test", MaxTokens: 1000,
		OnToolCall: func(c claude.ToolCall) { seen = append(seen, c.ID) }})

	got, err := chat.Send(context.Background(), "Remember to buy oat milk.")
	if err != nil || got != "Noted: oat milk." {
		t.Fatalf("Send = %q, %v; want the final text", got, err)
	}
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("the API got %d requests, want 2", len(reqs))
	}
	first := reqs[0]
	if b := first.Header.Get("anthropic-beta"); b != "context-management-2025-06-27,compact-2026-01-12" {
		t.Errorf("anthropic-beta = %q, want context-management-2025-06-27,compact-2026-01-12", b)
	}
	if k := first.Header.Get("x-api-key"); k != "sk-ant-test" {
		t.Errorf("x-api-key = %q", k)
	}
	if first.Body.Model != "claude-test" || first.Body.MaxTokens != 1000 || len(first.Body.Tools) != 1 ||
		string(first.Body.Tools[0]) != `{"name":"memory","type":"memory_20250818"}` {
		t.Errorf("request: model %q, max_tokens %d, tools %s", first.Body.Model, first.Body.MaxTokens, first.Body.Tools)
	}
	if cm, want := string(first.Body.ContextManagement), contextManagement(false); cm != want {
		t.Errorf("context_management = %s\nwant %s", cm, want)
	}

	msgs := reqs[1].Body.Messages
	if len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[2].Role != "user" || len(msgs[2].Content) != len(calls) {
		t.Fatalf("second request has messages %+v, want user, assistant, user with %d tool results", msgs, len(calls))
	}
	for i, c := range calls {
		var r toolResult
		if err := json.Unmarshal(msgs[2].Content[i], &r); err != nil {
			t.Fatal(err)
		}
		wantErr := strings.HasPrefix(c.want, "Error: ")
		if r.Type != "tool_result" || r.ToolUseID != c.id || r.IsError != wantErr || len(r.Content) != 1 || r.Content[0].Text != c.want {
			t.Errorf("tool result %d = %s\nwant tool_use_id %s, is_error %v, text %q", i, msgs[2].Content[i], c.id, wantErr, c.want)
		}
	}
	if strings.Join(seen, " ") != "toolu_01 toolu_02 toolu_03 toolu_04" {
		t.Errorf("OnToolCall saw %v, want the calls in order", seen)
	}

	recs, err := v.Log(context.Background(), vault.LogOptions{Limit: 2})
	if err != nil || len(recs) != 2 {
		t.Fatalf("Log = %v, %v", recs, err)
	}
	if recs[1].Command != "create" || recs[1].ToolUseID != "toolu_02" || recs[0].Command != "str_replace" ||
		recs[0].ToolUseID != "toolu_03" || recs[0].Agent != "memvault-chat" {
		t.Errorf("commits %+v, %+v; want create toolu_02 then str_replace toolu_03", recs[1], recs[0])
	}
}

// TestChatRetry: the SDK retries an overloaded API (529) and the turn goes on.
func TestChatRetry(t *testing.T) {
	api, client := newFakeAPI(t,
		apiFailure(529, "overloaded_error", "Overloaded", map[string]string{"retry-after-ms": "1"}),
		message("end_turn", textBlock("Hello again.")))
	chat, _ := newChat(t, client, claude.ChatOptions{})
	if got, err := chat.Send(context.Background(), "hi"); err != nil || got != "Hello again." {
		t.Fatalf("Send = %q, %v; want the answer after a retry", got, err)
	}
	if n := len(api.requests()); n != 2 {
		t.Errorf("the API got %d requests, want 2 (one retry)", n)
	}
}

func TestChatAPIErrors(t *testing.T) {
	ratelimited := apiFailure(429, "rate_limit_error", "Number of requests has exceeded your rate limit", map[string]string{"retry-after-ms": "1"})
	for _, tc := range []struct {
		name     string
		replies  []apiReply
		status   int
		want     string
		requests int
	}{
		{"auth", []apiReply{apiFailure(401, "authentication_error", "invalid x-api-key", nil)},
			401, "authentication failed (401): the API key was refused; check ANTHROPIC_API_KEY: invalid x-api-key (request id req_1)", 1},
		{"rate-limit", []apiReply{ratelimited, ratelimited, ratelimited},
			429, "rate limited (429), still after retries; wait and try again: Number of requests has exceeded your rate limit (request id req_3)", 3},
		{"bad-request", []apiReply{apiFailure(400, "invalid_request_error", "max_tokens: too large", nil)},
			400, "the API refused the request (400): max_tokens: too large", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, client := newFakeAPI(t, append(tc.replies, message("end_turn", textBlock("ok")))...)
			chat, _ := newChat(t, client, claude.ChatOptions{})
			_, err := chat.Send(context.Background(), "hi")
			var ae *claude.APIError
			if !errors.As(err, &ae) || ae.StatusCode != tc.status || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Send = %v, want an APIError %d saying %q", err, tc.status, tc.want)
			}
			if strings.Contains(err.Error(), "sk-ant-test") {
				t.Errorf("the error shows the API key: %v", err)
			}
			if n := len(api.requests()); n != tc.requests {
				t.Errorf("the API got %d requests, want %d", n, tc.requests)
			}
			// The failed prompt was taken back: the next request holds only the new one.
			if _, err := chat.Send(context.Background(), "again"); err != nil {
				t.Fatalf("Send after the failure = %v", err)
			}
			reqs := api.requests()
			if m := reqs[len(reqs)-1].Body.Messages; len(m) != 1 {
				t.Errorf("the request after the failure has %d messages, want 1", len(m))
			}
		})
	}
}

// TestChatCutOff: a tool call cut by max_tokens is not run, and the conversation stays valid.
func TestChatCutOff(t *testing.T) {
	_, client := newFakeAPI(t, message("max_tokens", toolUse("toolu_cut", `{"command":"create","path":"/memories/a.md","file_text":"cut off"}`)))
	chat, v := newChat(t, client, claude.ChatOptions{})
	if _, err := chat.Send(context.Background(), "write it"); !errors.Is(err, claude.ErrCutOff) {
		t.Errorf("Send = %v, want ErrCutOff", err)
	}
	if recs := vaulttest.Log(t, v, vault.LogOptions{}); len(recs) != 1 { // the init commit
		t.Errorf("the vault has %d commits, want only its first", len(recs))
	}
}
