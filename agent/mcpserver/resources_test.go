package mcpserver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestMCPResources(t *testing.T) {
	ctx := context.Background()
	cs := connectMCP(t, vaulttest.New(t), "test", mcpserver.Options{Poll: -1}, nil)
	callMemory(t, cs, `{"command":"create","path":"/memories/notes/a b.md","file_text":"hello\n"}`, "")
	callMemory(t, cs, `{"command":"create","path":"/memories/.hidden","file_text":"h"}`, "")
	callMemory(t, cs, `{"command":"create","path":"/memories/100%.txt","file_text":"ünï"}`, "")

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("ListResources: %v", err)
	}
	got := map[string]*mcp.Resource{}
	for _, r := range res.Resources {
		got[r.URI] = r
	}
	want := map[string]struct {
		name, mime string
		size       int64
	}{
		"memory:///memories/notes/a%20b.md": {"/memories/notes/a b.md", "text/markdown", 6},
		"memory:///memories/.hidden":        {"/memories/.hidden", "text/plain", 1},
		"memory:///memories/100%25.txt":     {"/memories/100%.txt", "text/plain", 5},
	}
	if len(got) != len(want) {
		t.Errorf("ListResources = %d resources, want %d", len(got), len(want))
	}
	for uri, w := range want {
		r := got[uri]
		if r == nil || r.Name != w.name || r.MIMEType != w.mime || r.Size != w.size {
			t.Errorf("resource %s = %+v, want name %q, type %s, size %d", uri, r, w.name, w.mime, w.size)
		}
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///memories/notes/a%20b.md"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello\n" {
		t.Fatalf("ReadResource(a b.md) = %+v, %v; want hello", rr, err)
	}
	for _, uri := range []string{"memory:///memories/missing.md", "memory:///memories/notes", "memory:///etc/passwd",
		"file:///memories/notes/a%20b.md", "memory:///memories/notes/../notes/a%20b.md"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("ReadResource(%s) succeeded, want an error", uri)
		}
	}
}

// TestMCPResourceNotifications checks the notifications a client gets: the list
// changes when a file comes or goes, and a subscriber hears of an update to its
// file, whether the change came through this server or from elsewhere.
func TestMCPResourceNotifications(t *testing.T) {
	ctx := context.Background()
	v := vaulttest.New(t)
	listChanged := make(chan struct{}, 16)
	updated := make(chan string, 16)
	cs := connectMCP(t, v, "test", mcpserver.Options{Poll: 20 * time.Millisecond}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	const uri = "memory:///memories/todo.md"

	callMemory(t, cs, `{"command":"create","path":"/memories/todo.md","file_text":"- one"}`, "")
	waitFor(t, listChanged, "resources/list_changed after a create")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("Subscribe(%s): %v", uri, err)
	}

	callMemory(t, cs, `{"command":"insert","path":"/memories/todo.md","insert_line":1,"insert_text":"- two"}`, "")
	if got := waitFor(t, updated, "resources/updated after an insert"); got != uri {
		t.Errorf("resources/updated for %s, want %s", got, uri)
	}

	// A change by another writer (another process, in real life) is found by polling.
	other := agent.New(agent.Vault(v), agent.Options{Agent: "other"})
	if c, isErr := other.Handle(ctx, []byte(`{"command":"str_replace","path":"/memories/todo.md","old_str":"one","new_str":"uno"}`), ""); isErr {
		t.Fatalf("str_replace: %s", c)
	}
	if got := waitFor(t, updated, "resources/updated after a change elsewhere"); got != uri {
		t.Errorf("resources/updated for %s, want %s", got, uri)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || rr.Contents[0].Text != "- uno\n- two" {
		t.Errorf("ReadResource after the change = %+v, %v; want the new content", rr, err)
	}

	drain(listChanged)
	callMemory(t, cs, `{"command":"delete","path":"/memories/todo.md"}`, "")
	waitFor(t, listChanged, "resources/list_changed after a delete")
	waitFor(t, updated, "resources/updated after a delete")
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Errorf("ReadResource after delete succeeded, want an error")
	}
}

func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestMCPListChangedOnlyForNewSet: edits that leave the set of files as it
// was bring no resources/list_changed (they used to bring one or more each,
// as a file's size changed), yet the list shows each file's size as it is now;
// a file that comes or goes still changes the list.
func TestMCPListChangedOnlyForNewSet(t *testing.T) {
	ctx := context.Background()
	v := vaulttest.New(t)
	listChanged := make(chan struct{}, 64)
	cs := connectMCP(t, v, "test", mcpserver.Options{Poll: 20 * time.Millisecond}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
	})
	callMemory(t, cs, `{"command":"create","path":"/memories/a.md","file_text":"a"}`, "")
	waitFor(t, listChanged, "resources/list_changed after a create")
	time.Sleep(100 * time.Millisecond)
	drain(listChanged)

	for i := range 10 {
		callMemory(t, cs, fmt.Sprintf(`{"command":"insert","path":"/memories/a.md","insert_line":%d,"insert_text":"line %d"}`, i+1, i), "")
	}
	callMemory(t, cs, `{"command":"str_replace","path":"/memories/a.md","old_str":"line 0","new_str":"the first line"}`, "")
	time.Sleep(300 * time.Millisecond) // several polls, and the SDK's notification delay
	if n := len(listChanged); n != 0 {
		t.Errorf("%d resources/list_changed for 11 edits of one file, want none", n)
	}
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.ReadFile(ctx, "/memories/a.md")
	if err != nil {
		t.Fatal(err)
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 1 || lr.Resources[0].Size != int64(len(data)) {
		t.Errorf("ListResources = %+v, %v; want a.md with its size now, %d", lr, err, len(data))
	}

	callMemory(t, cs, `{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/b.md"}`, "")
	waitFor(t, listChanged, "resources/list_changed after a rename")
}
