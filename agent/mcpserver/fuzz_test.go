package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// FuzzMCPArguments: an MCP client sends any JSON as the memory tool's
// arguments and any _meta. The call never fails and never panics: whatever the
// arguments, the answer is a tool result of one text, as the contract words it
// (is_error exactly when it begins "Error: "), and arguments that are no JSON
// object are refused as such. The SDK checks no schema for this tool, so a
// protocol error is never the answer to bad arguments.
func FuzzMCPArguments(f *testing.F) {
	v := vaulttest.New(f)
	ctx := context.Background()
	srv := mcpserver.New(v, mcpserver.Options{})
	f.Cleanup(srv.Close) // before the vault closes: it polls the vault
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
	for _, in := range agenttest.HostileInputs {
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
