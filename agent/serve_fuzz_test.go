package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault/vaulttest"
)

// hostileInputs are known traversal and injection inputs, seeds of the fuzz
// targets below.
var hostileInputs = []string{
	`{"command":"view","path":"/memories/../etc/passwd"}`,
	`{"command":"create","path":"/memories/%2e%2e/x","file_text":"x"}`,
	`{"command":"create","path":"/memories/%252e%252e/x","file_text":"x"}`,
	`{"command":"create","path":"/memories/a\\..\\b","file_text":"x"}`,
	`{"command":"create","path":"/memories/a\u0000b","file_text":"x"}`,
	`{"command":"create","path":"/memoriesfoo/x","file_text":"x"}`,
	`{"command":"rename","old_path":"/memories/a","new_path":"/memories/a/b"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"insert","path":"/memories/a.md","insert_line":1e400,"insert_text":"x"}`,
	`{"command":"insert","path":"/memories/a.md","insert_line":-9223372036854775809,"insert_text":"x"}`,
	`{"command":"view","path":"/memories","view_range":[1,2,3]}`,
	`{"command":"str_replace","path":"/memories/a.md","old_str":"$1","new_str":"$&"}`,
	`{"command":"create","path":"/memories/\ud800.md","file_text":"x"}`,
	`{"command":"create","path":"/memories/a.md","file_text":"x","command":"delete"}`,
	`{"command":"create","path":"/memories/a.md","file_text":"-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----"}`,
	`[{"command":"view"}]`,
	`{"command":{"$ne":null}}`,
}

// FuzzServe: Serve reads requests from whatever a bridge sends. It never
// panics, ends only with its input, and answers every request line (each
// non-blank line, and each over-long one) with exactly one well-formed answer
// line.
func FuzzServe(f *testing.F) {
	const maxLine = 256
	v := vaulttest.New(f)
	h := agent.New(v, agent.Options{MaxLine: maxLine})
	for i, in := range hostileInputs {
		f.Add([]byte(`{"id":` + string(rune('0'+i%10)) + `,"input":` + in + "}\n"))
	}
	f.Add([]byte(`{"id":1,"input":{"command":"create","path":"/memories/a.md","file_text":"a\nb"}}` + "\r\n" +
		`{"id":2,"input":{"command":"insert","path":"/memories/a.md","insert_line":1,"insert_text":"c"}}` + "\n\n \t\n" +
		`{"id":[],"input":{"command":"view","path":"/memories/a.md"},"tool_use_id":null}`))
	f.Add([]byte("\x00\n\xff\xfe\n{\n}\n{}\nnull\n\"x\"\n" + strings.Repeat("x", maxLine+1) + "\n" + strings.Repeat(" ", maxLine+5)))
	f.Add([]byte(`{"id":1e999,"input":{}}` + "\n" + `{"id":"\u2028","input":{"command":"view","path":"/memories"},"tool_use_id":"</script>"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := agent.Serve(context.Background(), h, bytes.NewReader(in), &out); err != nil {
			t.Fatalf("Serve = %v, want nil at the end of its input", err)
		}
		want := requestLines(in, maxLine)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			lines = nil
		}
		if len(lines) != want {
			t.Fatalf("Serve answered %d lines to %d requests:\nin  %q\nout %q", len(lines), want, in, out.String())
		}
		for _, l := range lines {
			var a struct {
				ID      json.RawMessage `json:"id"`
				Content *string         `json:"content"`
				IsError *bool           `json:"is_error"`
			}
			if err := json.Unmarshal([]byte(l), &a); err != nil || a.Content == nil || a.IsError == nil || len(a.ID) == 0 {
				t.Fatalf("answer line %q is not {id, content, is_error}: %v", l, err)
			}
		}
	})
}

// requestLines counts the requests Serve sees in in: lines split on "\n", one
// "\r" dropped from each, blank ones skipped unless over maxLine.
func requestLines(in []byte, maxLine int) int {
	n := 0
	for i, l := range bytes.Split(in, []byte("\n")) {
		if i == bytes.Count(in, []byte("\n")) && len(l) == 0 {
			break // after the last "\n"
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) > maxLine || len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}

// FuzzMCPArguments: an MCP client sends any JSON as the memory tool's
// arguments and any _meta. The call never fails and never panics: whatever the
// arguments, the answer is a tool result of one text, as the contract words it
// (is_error exactly when it begins "Error: "), and arguments that are no JSON
// object are refused as such. The SDK checks no schema for this tool, so a
// protocol error is never the answer to bad arguments.
func FuzzMCPArguments(f *testing.F) {
	v := vaulttest.New(f)
	ctx := context.Background()
	srv := agent.NewMCPServer(v, agent.MCPOptions{})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		f.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz\n<evil@x>", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	for _, in := range hostileInputs {
		f.Add(in, "toolu_1")
	}
	f.Add(`{"command":"view","path":"/memories"}`, "\x00\n")
	f.Add(`null`, "")
	f.Add(`{"command":"create","path":"/memories/x","file_text":null}`, strings.Repeat("t", 300))
	f.Fuzz(func(t *testing.T, args, toolUseID string) {
		if !json.Valid([]byte(args)) {
			return // the client's transport would not send it
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{
			Name:      "memory",
			Arguments: json.RawMessage(args),
			Meta:      mcp.Meta{"memvault/toolUseId": toolUseID},
		})
		if err != nil {
			t.Fatalf("CallTool(memory, %s) = %v, want a tool result", args, err)
		}
		if len(res.Content) != 1 {
			t.Fatalf("CallTool(memory, %s) = %d contents, want 1", args, len(res.Content))
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("CallTool(memory, %s) content is %T, want text", args, res.Content[0])
		}
		if res.IsError != strings.HasPrefix(text.Text, "Error: ") {
			t.Fatalf("CallTool(memory, %s) = isError %v with %q; want isError exactly for an answer beginning \"Error: \"", args, res.IsError, text.Text)
		}
		if !isObject(args) && (!res.IsError || !strings.HasPrefix(text.Text, "Error: Invalid tool input: expected a JSON object")) {
			t.Fatalf("CallTool(memory, %s) = isError %v with %q; want the answer for input that is no JSON object", args, res.IsError, text.Text)
		}
	})
}
