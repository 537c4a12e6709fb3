package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var _ mcpserver.Store = (*vault.Vault)(nil)

// connectMCP serves store with New over the SDK's in-memory transports
// and connects a client named name to it.
func connectMCP(t *testing.T, store mcpserver.Store, name string, sopts mcpserver.Options, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcpserver.New(store, sopts)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "v1.0.0"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		srv.Close() // before the store closes: it polls the store
	})
	return cs
}

// callMemory calls the memory tool with input, recording toolUseID, and returns
// its text and isError.
func callMemory(t *testing.T, cs *mcp.ClientSession, input, toolUseID string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name:      "memory",
		Arguments: json.RawMessage(input),
		Meta:      mcp.Meta{"memvault/toolUseId": toolUseID},
	})
	if err != nil {
		t.Fatalf("CallTool(memory, %s) = %v", input, err)
	}
	return resultText(t, res), res.IsError
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("tool result has %d content blocks, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tool result content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// isObject tells whether input can travel as MCP tool arguments, which are a
// JSON object inside the JSON-RPC message.
func isObject(input string) bool {
	s := strings.TrimSpace(input)
	return json.Valid([]byte(s)) && strings.HasPrefix(s, "{")
}

// TestMCPConformance drives the whole contract through the memory tool of the
// MCP server, with the SDK's client. Inputs that are not a JSON object cannot
// be MCP tool arguments at all; a client refuses to send them. The vault is
// in the default format, sealed; the handler's TestContract runs the cases
// of long names a sealed vault refuses on a plain one.
func TestMCPConformance(t *testing.T) {
	agenttest.RunExcept(t, func(t *testing.T) agenttest.Target {
		v := vaulttest.New(t)
		cs := connectMCP(t, v, "agenttest", mcpserver.Options{Poll: -1}, nil)
		return agenttest.Target{
			Do: func(input, toolUseID string) (string, bool) {
				if !isObject(input) {
					t.Skip("not a JSON object: MCP tool arguments are always one")
				}
				return callMemory(t, cs, input, toolUseID)
			},
			Log: func() ([]vault.Record, error) { return v.Log(context.Background(), vault.LogOptions{}) },
		}
	}, agenttest.SealedDiffers)
}

func TestMCPTools(t *testing.T) {
	cs := connectMCP(t, vaulttest.New(t), "test", mcpserver.Options{Poll: -1}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	mem, hist := tools["memory"], tools["history"]
	if mem == nil || hist == nil || tools["search"] == nil || tools["blame"] == nil || len(tools) != 4 {
		t.Fatalf("ListTools = %v, want memory, history, search and blame", slices.Collect(maps.Keys(tools)))
	}
	for _, want := range []string{"ALWAYS VIEW YOUR MEMORY DIRECTORY", "record status, progress", "ASSUME INTERRUPTION", "str_replace"} {
		if !strings.Contains(mem.Description, want) {
			t.Errorf("memory description lacks %q", want)
		}
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		OneOf      any                        `json:"oneOf"`
	}
	remarshal(t, mem.InputSchema, &schema)
	var command struct {
		Type string   `json:"type"`
		Enum []string `json:"enum"`
	}
	if err := json.Unmarshal(schema.Properties["command"], &command); err != nil {
		t.Fatalf("command property: %v", err)
	}
	wantFields := []string{"command", "file_text", "insert_line", "insert_text", "new_path", "new_str",
		"old_path", "old_str", "path", "view_range"}
	wantCommands := []string{"view", "create", "str_replace", "insert", "delete", "rename"}
	if got := slices.Sorted(maps.Keys(schema.Properties)); schema.Type != "object" || !slices.Equal(got, wantFields) ||
		!slices.Equal(schema.Required, []string{"command"}) || schema.OneOf != nil ||
		command.Type != "string" || !slices.Equal(command.Enum, wantCommands) {
		t.Errorf("memory input schema: type %q, properties %v, required %v, oneOf %v, command %+v\nwant object, %v, [command], none, enum %v",
			schema.Type, got, schema.Required, schema.OneOf, command, wantFields, wantCommands)
	}
	for name, want := range map[string]string{"path": "string", "view_range": "array", "insert_line": "integer", "file_text": "string"} {
		var p struct{ Type string }
		if err := json.Unmarshal(schema.Properties[name], &p); err != nil || p.Type != want {
			t.Errorf("property %s has type %q, want %q", name, p.Type, want)
		}
	}
	if mem.Annotations == nil || mem.Annotations.ReadOnlyHint || !hist.Annotations.ReadOnlyHint {
		t.Errorf("annotations: memory %+v, history %+v; want memory writable, history read-only", mem.Annotations, hist.Annotations)
	}
	if init := cs.InitializeResult(); !strings.Contains(init.Instructions, "ASSUME INTERRUPTION") {
		t.Errorf("server instructions = %q, want the memory protocol", init.Instructions)
	}
}

// TestMCPCommitTrailers pins that commits through MCP name the client and a
// session of memvault's own, distinct per connection.
func TestMCPCommitTrailers(t *testing.T) {
	v := vaulttest.New(t)
	a := connectMCP(t, v, "claude-code", mcpserver.Options{Poll: -1}, nil)
	b := connectMCP(t, v, "desktop", mcpserver.Options{Poll: -1}, nil)
	callMemory(t, a, `{"command":"create","path":"/memories/a.md","file_text":"a"}`, "toolu_a")
	callMemory(t, b, `{"command":"create","path":"/memories/b.md","file_text":"b"}`, "")
	recs, err := v.Log(context.Background(), vault.LogOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	rb, ra := recs[0], recs[1]
	if ra.Agent != "claude-code" || ra.ToolUseID != "toolu_a" || rb.Agent != "desktop" || rb.ToolUseID != "" {
		t.Errorf("commits: %+v, %+v; want Agent claude-code with Tool-Use-Id toolu_a, then desktop without", ra, rb)
	}
	if !strings.HasPrefix(ra.Session, "mcp-") || !strings.HasPrefix(rb.Session, "mcp-") || ra.Session == rb.Session {
		t.Errorf("sessions %q and %q, want two distinct mcp-… ids", ra.Session, rb.Session)
	}
}

// TestMCPHistory runs on both formats: a sealed vault's history reads opened.
func TestMCPHistory(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sealed=%v", sealed), func(t *testing.T) { testMCPHistory(t, vaulttest.NewFormat(t, sealed)) })
	}
}

func testMCPHistory(t *testing.T, v *vault.Vault) {
	cs := connectMCP(t, v, "claude-code", mcpserver.Options{Poll: -1}, nil)
	callMemory(t, cs, `{"command":"create","path":"/memories/a.md","file_text":"a"}`, "toolu_1")
	callMemory(t, cs, `{"command":"create","path":"/memories/b.md","file_text":"b"}`, "toolu_2")
	for _, tc := range []struct {
		args    string
		want    []string
		not     []string
		isError bool
	}{
		{`{}`, []string{"create /memories/b.md (agent claude-code, session mcp-", "tool use toolu_2, signed by SHA256:", "create /memories/a.md"}, nil, false},
		{`{"path":"/memories/a.md"}`, []string{"changed /memories/a.md", "create /memories/a.md"}, []string{"b.md"}, false},
		{`{"limit":1}`, []string{"The last 1 commits", "b.md"}, []string{"a.md"}, false},
		{`{"limit":0}`, []string{"Error: Invalid limit 0"}, nil, true},
		{`{"path":"/etc"}`, []string{"Error: Invalid path /etc"}, nil, true},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "history", Arguments: json.RawMessage(tc.args)})
		if err != nil {
			t.Fatalf("CallTool(history, %s) = %v", tc.args, err)
		}
		got := resultText(t, res)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("history(%s) = %q, want it to contain %q", tc.args, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("history(%s) = %q, want no %q", tc.args, got, n)
			}
		}
		if res.IsError != tc.isError {
			t.Errorf("history(%s) isError = %v, want %v", tc.args, res.IsError, tc.isError)
		}
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(b)).Decode(to)
	}
	if err != nil {
		t.Fatalf("remarshal %T: %v", from, err)
	}
}

// waitFor waits for a value on ch, failing the test after a while.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
		panic("unreachable")
	}
}

// TestMCPLegacyClient speaks the wire protocol as Claude Desktop and Claude
// Code do today: initialize with a 2025 protocol version, initialized, then
// tools/call. The commit names the client from initialize.
func TestMCPLegacyClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v := vaulttest.New(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.New(v, mcpserver.Options{Poll: -1}).Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
	}()
	out := bufio.NewScanner(outR)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write %s: %v", line, err)
		}
	}
	// recv returns the next answer, passing over notifications: the server may
	// send one at any time (a list_changed after the create, from the refresh
	// that initialized started), so an answer is not always the next line.
	recv := func() string {
		for out.Scan() {
			if !strings.HasPrefix(out.Text(), `{"jsonrpc":"2.0","method":`) {
				return out.Text()
			}
		}
		t.Fatalf("no answer: %v", out.Err())
		return ""
	}
	// The server writes into a pipe: whatever it still says after the test
	// stops reading must not block it, or Run never returns.
	drain := sync.OnceFunc(func() { go io.Copy(io.Discard, outR) })
	defer drain()
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1.0"}}}`)
	if got := recv(); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) || !strings.Contains(got, `"name":"memvault"`) {
		t.Fatalf("initialize answer = %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/a.md","file_text":"x"}}}`)
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"File created successfully at: /memories/a.md"}]}}`
	if got := recv(); got != want {
		t.Errorf("tools/call answer =\n%s\nwant\n%s", got, want)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{"command":"view","path":"/nope"}}}`)
	want = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Error: Path must start with /memories, got: /nope"}],"isError":true}}`
	if got := recv(); got != want {
		t.Errorf("tools/call answer =\n%s\nwant\n%s", got, want)
	}
	inW.Close()
	drain()
	if err := <-done; err != nil && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, io.EOF) {
		t.Errorf("Run = %v", err)
	}
	recs, err := v.Log(ctx, vault.LogOptions{Limit: 1})
	if err != nil || recs[0].Agent != "claude-ai" || !strings.HasPrefix(recs[0].Session, "mcp-") {
		t.Errorf("last commit = %+v, %v; want Agent claude-ai and an mcp- session", recs, err)
	}
}

// TestServeMCPStdio: requests read before the end of input are all answered,
// so a script may pipe its requests in and close.
func TestServeMCPStdio(t *testing.T) {
	v := vaulttest.New(t)
	in := strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/a.md","file_text":"a"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/b.md","file_text":"b"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
`)
	var out bytes.Buffer
	if err := mcpserver.ServeStdio(context.Background(), mcpserver.New(v, mcpserver.Options{Poll: -1}).Server, in, &out, 0); err != nil {
		t.Fatalf("ServeStdio = %v", err)
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer line %q: %v", line, err)
		}
		if m.ID != nil { // not a notification
			ids[string(m.ID)] = true
		}
	}
	if len(ids) != 4 || !ids["0"] || !ids["1"] || !ids["2"] || !ids["3"] {
		t.Errorf("answered ids %v, want 0 to 3:\n%s", slices.Collect(maps.Keys(ids)), out.String())
	}
	if recs, err := v.Log(context.Background(), vault.LogOptions{}); err != nil || len(recs) != 3 {
		t.Errorf("Log = %d commits, %v; want the init and two creates", len(recs), err)
	}
}

// A client names itself; its name must not forge or break the commit's author line.
func TestMCPClientName(t *testing.T) {
	v := vaulttest.New(t)
	cs := connectMCP(t, v, "evil <x@y> 1 +0000\n", mcpserver.Options{Poll: -1}, nil)
	callMemory(t, cs, `{"command":"create","path":"/memories/a.md","file_text":"a"}`, "")
	recs, err := v.Log(context.Background(), vault.LogOptions{Limit: 1})
	if err != nil || recs[0].Agent != "evil x@y 1 +0000" || recs[0].Author != "evil x@y 1 +0000" {
		t.Errorf("commit = %+v, %v; want the name without angle brackets", recs, err)
	}
}
