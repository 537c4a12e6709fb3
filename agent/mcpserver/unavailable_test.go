package mcpserver_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

const downReason = "Error: memvault could not start: the vault is damaged.\nRun memvault fsck --repair."

// TestMCPUnavailable: a client lists the same tools as on a working server,
// and each call answers with the reason as an error result.
func TestMCPUnavailable(t *testing.T) {
	ctx := context.Background()
	connect := func(srv *mcp.Server) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); ss.Wait() })
		return cs
	}
	down := connect(mcpserver.NewUnavailable(downReason, mcpserver.Options{Version: "v9"}))
	up := connect(mcpserver.New(vaulttest.New(t), mcpserver.Options{Poll: -1}).Server)
	downTools, err := down.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools on the unavailable server = %v", err)
	}
	upTools, err := up.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(downTools.Tools, upTools.Tools) {
		t.Errorf("the unavailable server lists %+v\nwant the working server's %+v", downTools.Tools, upTools.Tools)
	}
	if got := down.InitializeResult().ServerInfo.Version; got != "v9" {
		t.Errorf("serverInfo version %q, want v9", got)
	}
	for _, name := range []string{"memory", "history"} {
		res, err := down.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"command": "view", "path": "/memories"}})
		if err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != downReason {
			t.Errorf("CallTool(%s) = %+v, %v; want the reason as an error result", name, res, err)
		}
	}
}
