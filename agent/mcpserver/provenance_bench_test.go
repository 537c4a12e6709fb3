package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkMCPSearch is the search tool over 10,000 files of 1 KB, warm, as a
// long-lived MCP server answers it: through the MCP SDK's client and server on
// in-memory transports, each call a whole tools/call. Target: ≤ 50 ms.
func BenchmarkMCPSearch(b *testing.B) {
	v := vaulttest.New(b)
	vaulttest.Seed(b, v, 10000, 1)
	ctx := context.Background()
	srv := mcpserver.New(v, mcpserver.Options{Poll: -1})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: json.RawMessage(`{"pattern":"memory line 4242 about"}`)})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "24 in 1 file(s)") {
			b.Fatalf("search = %+v, %v; want 24 lines in one file", res, err)
		}
	}
	call() // the first call decrypts every file; the server keeps the plaintext in memory
	defer cpuSince(b, vaulttest.CPUTime())
	for b.Loop() {
		call()
	}
}

// cpuSince reports the process's CPU time per operation since start.
func cpuSince(b *testing.B, start interface{ Microseconds() int64 }) {
	b.ReportMetric(float64(vaulttest.CPUTime().Microseconds()-start.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
