package mcpserver_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestCloseWaitsForRequests: the vault is closed once Close returns, so Close
// must not return while a request is still using it, and must refuse the
// requests that come after. Over HTTP a handler can outlive ServeHTTP (a
// notification is answered before it is handled; a request past the
// shutdown's grace is cut off unwaited), and a create held in its commit was
// written after the server was closed.
func TestCloseWaitsForRequests(t *testing.T) {
	ctx := context.Background()
	g := &gatedVault{Vault: vaulttest.New(t), held: make(chan struct{}), release: make(chan struct{})}
	srv := mcpserver.New(g, mcpserver.Options{Poll: -1})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "closer", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	call := func(input string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory", Arguments: json.RawMessage(input)})
	}

	created := make(chan error, 1)
	go func() {
		_, err := call(`{"command":"create","path":"/memories/late.md","file_text":"late\n"}`)
		created <- err
	}()
	<-g.held // the create is in the server, held before its commit
	var once sync.Once
	release := func() { once.Do(func() { close(g.release) }) }
	defer release() // before the session ends, which waits for the create
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a create was still being served")
	case <-time.After(300 * time.Millisecond):
	}
	release()
	if err := <-created; err != nil {
		t.Errorf("the create in flight: %v", err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the create was served")
	}
	if res, err := call(`{"command":"view","path":"/memories"}`); err == nil && !res.IsError {
		t.Errorf("a view after Close was served: %+v", res)
	}
}
