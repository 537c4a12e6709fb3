package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestMCPResourceReadRecordsUse: a memory file an MCP client reads as a
// resource is used, as a viewed one is, so expire keeps it. Listing the
// resources, or a file changing under a subscription, is no use of a file.
func TestMCPResourceReadRecordsUse(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := vaulttest.NewClocked(t, &now)
	cs := connectMCP(t, v, "test", mcpserver.Options{Poll: -1}, nil)
	callMemory(t, cs, `{"command":"create","path":"/memories/read.md","file_text":"r"}`, "")
	callMemory(t, cs, `{"command":"create","path":"/memories/listed.md","file_text":"l"}`, "")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "memory:///memories/listed.md"}); err != nil {
		t.Fatalf("Subscribe(listed.md): %v", err)
	}

	now = now.Add(60 * 24 * time.Hour)
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatalf("ListResources: %v", err)
	}
	const uri = "memory:///memories/read.md"
	if rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || rr.Contents[0].Text != "r" {
		t.Fatalf("ReadResource(%s) = %+v, %v; want r", uri, rr, err)
	}
	// A change elsewhere, which the server reads to tell the subscriber.
	other := agent.New(agent.Vault(v), agent.Options{})
	if c, isErr := other.Handle(ctx, []byte(`{"command":"create","path":"/memories/new.md","file_text":"n"}`), ""); isErr {
		t.Fatalf("create new.md: %s", c)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatalf("ListResources: %v", err)
	}

	now = now.Add(60 * 24 * time.Hour)
	unused, _, err := v.Expire(ctx, 90*24*time.Hour, true)
	if err != nil || len(unused) != 1 || unused[0].Path != "/memories/listed.md" {
		t.Errorf("Expire(90d, dry run) = %v, %v; want listed.md alone: a resource read is a use, a listing is not", unused, err)
	}
}
