package bridges_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The npm packages the TypeScript bridge is tested with: the SDK version the
// memory tool contract names as its reference.
var npmPackages = []string{"@anthropic-ai/sdk@1.12.0", "typescript@5.9", "@types/node@20"}

// TestTypeScriptBridge runs the README's TypeScript example (example.ts) with
// the real @anthropic-ai/sdk tool runner against a local stand-in for the
// Messages API that answers with the scenario's tool_use blocks, and checks
// the tool_result blocks the runner sends back, byte for byte, and the commits.
func TestTypeScriptBridge(t *testing.T) {
	dir := installTypeScript(t)
	v, env := newVault(t)
	api := &messagesAPI{t: t}
	srv := httptest.NewServer(api)
	defer srv.Close()

	cmd := exec.Command("node", filepath.Join(dir, "out", "example.js"), "Remember that I prefer green tea.")
	cmd.Env = append(env, "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL="+srv.URL)
	if got := run(t, cmd); got != "Noted: green tea.\n" {
		t.Errorf("example.js printed %q, want the final text", got)
	}
	results := api.toolResults()
	if len(results) != len(scenario) {
		t.Fatalf("the runner sent %d tool results, want %d: %v", len(results), len(scenario), results)
	}
	for i, c := range scenario {
		r := results[i]
		wantErr := strings.HasPrefix(c.want, "Error: ")
		if r.ToolUseID != c.id || r.IsError != wantErr || r.text() != c.want {
			t.Errorf("tool result %d: id %s, is_error %v, content %q\nwant %s, %v, %q", i, r.ToolUseID, r.IsError, r.text(), c.id, wantErr, c.want)
		}
	}
	checkCommits(t, v, "my-ts-agent", true)
}

// installTypeScript installs the npm packages and compiles the bridge and its
// example, once for the whole test process, or skips the test when node or npm
// is missing or the packages cannot be installed. In CI (CI=true), which
// installs node and npm, either is a failure: a skip there would pass without
// testing. Tests only read the folder, but for files of their own.
func installTypeScript(t testing.TB) string {
	t.Helper()
	tsOnce.Do(func() { tsDir, tsMissing, tsErr = installTypeScriptOnce() })
	switch {
	case tsMissing != "":
		skipUnlessCI(t, "%s", tsMissing)
	case tsErr != nil:
		t.Fatal(tsErr)
	}
	return tsDir
}

// The TypeScript install shared by the tests of one process, under the
// folder TestMain removes.
var (
	tsOnce    sync.Once
	tsDir     string
	tsMissing string // why node, npm or the packages are not there
	tsErr     error
)

func installTypeScriptOnce() (dir, missing string, err error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", tool + " is not installed (apt-get install nodejs npm)", nil
		}
	}
	dir = filepath.Join(memvaultDir, "typescript")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	for _, f := range []string{"memvault.ts", "example.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join("typescript", f))
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", "", err
		}
	}
	install := exec.Command("npm", append([]string{"install", "--prefer-offline", "--no-audit", "--no-fund", "--no-save", "--prefix", dir}, npmPackages...)...)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("npm cannot install %v: %v\n%s", npmPackages, err, out), nil
	}
	tsc := exec.Command(filepath.Join(dir, "node_modules", ".bin", "tsc"), "-p", dir)
	if out, err := tsc.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("tsc: %v\n%s", err, out)
	}
	return dir, "", nil
}

// messagesAPI plays the Messages API for one turn: the scenario's tool_use
// blocks, then, once the tool results come back, the final text.
type messagesAPI struct {
	t       *testing.T
	mu      sync.Mutex
	results []apiToolResult
	n       int
}

type apiToolResult struct {
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// text is the result's content: a string, or the text of its one text block.
func (r apiToolResult) text() string {
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		return s
	}
	var blocks []struct{ Text string }
	if json.Unmarshal(r.Content, &blocks) == nil && len(blocks) == 1 {
		return blocks[0].Text
	}
	return string(r.Content)
}

func (a *messagesAPI) toolResults() []apiToolResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.results
}

func (a *messagesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct{ Type, Name string } `json:"tools"`
	}
	if r.URL.Path != "/v1/messages" || json.Unmarshal(body, &req) != nil || req.Stream {
		a.t.Errorf("unexpected request %s %s: %s", r.Method, r.URL, body)
		http.Error(w, "unexpected", 400)
		return
	}
	a.n++
	// The runner continues a message thread: only the first request declares the tools.
	if a.n == 1 && (len(req.Tools) != 1 || req.Tools[0].Type != "memory_20250818" || req.Tools[0].Name != "memory") {
		a.t.Errorf("request tools = %+v, want the memory tool", req.Tools)
	}
	w.Header().Set("Content-Type", "application/json")
	if a.n == 1 {
		var blocks []string
		for _, c := range scenario {
			blocks = append(blocks, `{"type":"tool_use","id":"`+c.id+`","name":"memory","input":`+c.input+`}`)
		}
		io.WriteString(w, reply("tool_use", blocks...))
		return
	}
	last := req.Messages[len(req.Messages)-1]
	var blocks []apiToolResult
	if err := json.Unmarshal(last.Content, &blocks); err != nil {
		a.t.Errorf("last message %s: %v", last.Content, err)
	}
	a.results = blocks
	io.WriteString(w, reply("end_turn", `{"type":"text","text":"Noted: green tea."}`))
}

func reply(stop string, blocks ...string) string {
	return `{"id":"msg_b","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[` +
		strings.Join(blocks, ",") + `],"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
}

// TestTypeScriptBridgeNullID: an answer whose id is null (memvault serve could
// not read the request's id) goes to the oldest call waiting, since answers
// come in order; the bridge once waited for it forever.
func TestTypeScriptBridgeNullID(t *testing.T) {
	dir := installTypeScript(t)
	_, env := newVault(t)
	script, err := filepath.Abs(filepath.Join("typescript", "nullid.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "--stack-size=20000", script, filepath.Join(dir, "out", "memvault.js"))
	cmd.Env = env
	var answers []struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	out := run(t, cmd)
	if err := json.Unmarshal([]byte(out), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("nullid.js printed %q (%v), want two answers", out, err)
	}
	if a := answers[0]; !a.IsError || !strings.HasPrefix(a.Content, "Error: Invalid request: ") {
		t.Errorf("answer to the unreadable request = %+v, want an invalid-request error", a)
	}
	if a := answers[1]; a.IsError || !strings.HasPrefix(a.Content, "Here're the files and directories") {
		t.Errorf("answer to the view after it = %+v, want the listing", a)
	}
}
