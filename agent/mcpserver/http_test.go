package mcpserver_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// serveHTTP serves a fresh vault over streamable HTTP on loopback and returns
// its URL and the vault.
func serveHTTP(t *testing.T, opts mcpserver.HTTPOptions) (string, *vault.Vault) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	v := vaulttest.New(t)
	ln, err := mcpserver.Listen(ctx, "127.0.0.1:0", opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeHTTP(ctx, mcpserver.New(v, mcpserver.Options{Poll: -1}).Server, ln, opts)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP = %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp", v
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: bearer{token}}
	if token == "" {
		hc = http.DefaultClient
	}
	return mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
}

func TestMCPHTTP(t *testing.T) {
	ctx := context.Background()
	url, v := serveHTTP(t, mcpserver.HTTPOptions{Token: "s3cret-token"})

	cs, err := connectHTTP(ctx, url, "s3cret-token")
	if err != nil {
		t.Fatalf("Connect with the token: %v", err)
	}
	defer cs.Close()
	got, isErr := callMemory(t, cs, `{"command":"create","path":"/memories/h.md","file_text":"over http"}`, "toolu_http")
	if got != "File created successfully at: /memories/h.md" || isErr {
		t.Errorf("create over HTTP = %q, %v", got, isErr)
	}
	if got, _ := callMemory(t, cs, `{"command":"view","path":"/memories/h.md"}`, ""); got != "Here's the content of /memories/h.md with line numbers:\n     1\tover http" {
		t.Errorf("view over HTTP = %q", got)
	}
	recs, err := v.Log(ctx, vault.LogOptions{Limit: 1})
	if err != nil || recs[0].Agent != "http-client" || recs[0].ToolUseID != "toolu_http" {
		t.Errorf("commit = %+v, %v; want Agent http-client, Tool-Use-Id toolu_http", recs, err)
	}

	for _, token := range []string{"", "wrong", "s3cret-tokenX", "s3cret"} {
		if cs, err := connectHTTP(ctx, url, token); err == nil {
			cs.Close()
			t.Errorf("Connect with token %q succeeded, want refused", token)
		}
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer nope")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("POST with a wrong token: %s, WWW-Authenticate %q; want 401 Bearer", res.Status, res.Header.Get("WWW-Authenticate"))
	}
}

func TestMCPHTTPNoAuth(t *testing.T) {
	url, _ := serveHTTP(t, mcpserver.HTTPOptions{NoAuth: true})
	cs, err := connectHTTP(context.Background(), url, "")
	if err != nil {
		t.Fatalf("Connect on loopback without a token: %v", err)
	}
	defer cs.Close()
	if got, isErr := callMemory(t, cs, `{"command":"view","path":"/memories"}`, ""); isErr {
		t.Errorf("view = %q, error", got)
	}
	// A browser page on another origin must not reach a loopback server.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST: %s, want 403", res.Status)
	}
}

func TestListenMCP(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		addr string
		opts mcpserver.HTTPOptions
	}{
		{"0.0.0.0:0", mcpserver.HTTPOptions{}},
		{"[::]:0", mcpserver.HTTPOptions{}},
		{"0.0.0.0:0", mcpserver.HTTPOptions{AllowRemote: true}},            // no token
		{"0.0.0.0:0", mcpserver.HTTPOptions{Token: "t"}},                   // not allowed
		{"192.0.2.1:0", mcpserver.HTTPOptions{Token: "t"}},                 // TEST-NET address, never bound
		{"[2001:db8::1]:0", mcpserver.HTTPOptions{AllowRemote: false}},     // documentation prefix
		{"203.0.113.7:0", mcpserver.HTTPOptions{AllowRemote: true}},        // still no token
		{"0.0.0.0:0", mcpserver.HTTPOptions{AllowRemote: true, Token: ""}}, // explicit empty token
	} {
		ln, err := mcpserver.Listen(ctx, tc.addr, tc.opts)
		if err == nil {
			ln.Close()
		}
		if !errors.Is(err, mcpserver.ErrNotLoopback) {
			t.Errorf("Listen(%q, %+v) = %v, want ErrNotLoopback", tc.addr, tc.opts, err)
		}
	}
	for _, addr := range []string{":0", "0", "127.0.0.1:0", "localhost:0", "[::1]:0"} {
		ln, err := mcpserver.Listen(ctx, addr, mcpserver.HTTPOptions{})
		if err != nil {
			if addr == "[::1]:0" {
				continue // no IPv6 loopback here
			}
			t.Errorf("Listen(%q) = %v, want a loopback listener", addr, err)
			continue
		}
		if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			t.Errorf("Listen(%q) listens on %v, want loopback", addr, ip)
		}
		ln.Close()
	}
}
