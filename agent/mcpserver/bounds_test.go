package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestMCPSubscriptionBounds: a client once subscribed to 20,000 paths and
// left; the subscriptions stayed, and every later write compared each of
// them, seconds a write, for good. A session holds at most 1,000, the server
// 10,000, and a session's subscriptions end with it.
func TestMCPSubscriptionBounds(t *testing.T) {
	ctx := context.Background()
	srv := mcpserver.New(vaulttest.New(t), mcpserver.Options{Poll: -1})
	connect := func(name string) (*mcp.ClientSession, *mcp.ServerSession) {
		t.Helper()
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatalf("server Connect: %v", err)
		}
		// The revision of Claude Code and Claude Desktop today, whose
		// subscriptions outlive their requests.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "v1"}, nil).
			Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
		if err != nil {
			t.Fatalf("client Connect: %v", err)
		}
		t.Cleanup(func() { cs.Close(); ss.Wait() })
		return cs, ss
	}
	subscribe := func(cs *mcp.ClientSession, i int) error {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: fmt.Sprintf("memory:///memories/p%05d.md", i)})
	}

	var held []*mcp.ClientSession
	for s := range 10 {
		cs, _ := connect(fmt.Sprintf("greedy-%d", s))
		for i := range 1000 {
			if err := subscribe(cs, s*1000+i); err != nil {
				t.Fatalf("session %d: subscription %d: %v", s, i+1, err)
			}
		}
		// A subscription already held is no new one.
		if err := subscribe(cs, s*1000); err != nil {
			t.Errorf("session %d: subscribing again to a path it holds: %v", s, err)
		}
		if s == 0 {
			err := subscribe(cs, 99999)
			if err == nil || !strings.Contains(err.Error(), "too many subscriptions: at most 1000 a session") {
				t.Fatalf("session 0: subscription 1,001 = %v, want refused: at most 1000 a session", err)
			}
		}
		held = append(held, cs)
	}
	late, _ := connect("late")
	if err := subscribe(late, 99998); err == nil || !strings.Contains(err.Error(), "limit of 10000") {
		t.Fatalf("subscription 10,001 of the server = %v, want refused: its limit of 10000", err)
	}
	// Unsubscribing from what another session holds frees nothing.
	for i := range 5 {
		if err := late.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: fmt.Sprintf("memory:///memories/p%05d.md", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := subscribe(late, 99998); err == nil {
		t.Fatalf("after unsubscribing from others' paths, subscription 10,001 was taken")
	}
	// The clients leave: their subscriptions go with them.
	for _, cs := range held {
		cs.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := subscribe(late, 99998)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the subscribers left, a subscription is still refused: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// initialize opens a session of the 2025-06-18 revision over HTTP and
// returns its Mcp-Session-Id, or the status and body of a refusal.
func initialize(ctx context.Context, url string) (sid string, status int, body string, err error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"many","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.Header.Get("Mcp-Session-Id"), res.StatusCode, string(b), nil
}

// TestMCPHTTPSessionBounds: sessions had no cap (40,000 took 440 MB), nor
// did held event streams (5,000 took 202 MB). The server holds at most 1,000
// sessions and 256 streams, and says so to the one over the limit.
func TestMCPHTTPSessionBounds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, _ := serveHTTP(t, mcpserver.HTTPOptions{NoAuth: true})
	var sids []string
	for i := range 1000 {
		sid, status, body, err := initialize(ctx, url)
		if err != nil || status != http.StatusOK || sid == "" {
			t.Fatalf("initialize %d: %d %q, %v", i+1, status, body, err)
		}
		sids = append(sids, sid)
	}
	if _, status, body, err := initialize(ctx, url); err != nil || status != http.StatusServiceUnavailable ||
		!strings.Contains(body, "too many MCP sessions") {
		t.Errorf("initialize 1,001: %d %q, %v; want 503, too many MCP sessions", status, body, err)
	}

	// Event streams: one standalone GET each for 256 sessions is the limit.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	get := func(sid string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		return http.DefaultClient.Do(req)
	}
	for i, sid := range sids[:256] {
		res, err := get(sid)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("event stream %d: %v, %v", i+1, res, err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); io.Copy(io.Discard, res.Body); res.Body.Close() }()
	}
	res, err := get(sids[256])
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	if res.StatusCode != http.StatusOK { // a stream that was let through never ends
		b, _ = io.ReadAll(res.Body)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "too many open MCP event streams") {
		t.Errorf("event stream 257: %s %q, want 503, too many open MCP event streams", res.Status, b)
	}
}
