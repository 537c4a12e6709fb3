package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestMCPHTTPNeedsToken: loopback is open to every account on the machine,
// so a server given no token must not answer: a request without
// Authorization once read and wrote the vault of whoever started the server.
func TestMCPHTTPNeedsToken(t *testing.T) {
	srv := mcpserver.New(vaulttest.New(t), mcpserver.Options{Poll: -1})
	h := mcpserver.Handler(srv.Server, mcpserver.HTTPOptions{})
	for _, auth := range []string{"", "Bearer ", "Bearer x"} {
		req := httptest.NewRequest("POST", mcpserver.Path, strings.NewReader(
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other-user","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("Handler with no token: initialize with Authorization %q: %d, want 401", auth, rec.Code)
		}
	}

	// A server that does serve returns only when ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ln, err := mcpserver.Listen(ctx, "127.0.0.1:0", mcpserver.HTTPOptions{})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	if err := mcpserver.ServeHTTP(ctx, srv.Server, ln, mcpserver.HTTPOptions{}); !errors.Is(err, mcpserver.ErrNoToken) {
		t.Errorf("ServeHTTP with no token = %v, want ErrNoToken", err)
	}
}

// TestMCPHTTPBearerAnyCase: HTTP compares the names of authentication
// schemes without regard to case, and clients send "bearer" too; the token
// was refused unless the scheme was spelled "Bearer".
func TestMCPHTTPBearerAnyCase(t *testing.T) {
	srv := mcpserver.New(vaulttest.New(t), mcpserver.Options{Poll: -1})
	h := mcpserver.Handler(srv.Server, mcpserver.HTTPOptions{Token: "s3cret"})
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"Bearer s3cret", http.StatusOK},
		{"bearer s3cret", http.StatusOK},
		{"BEARER s3cret", http.StatusOK},
		{"bEaReR  s3cret", http.StatusOK},
		{"bearer s3cretx", http.StatusUnauthorized},
		{"Basic s3cret", http.StatusUnauthorized},
		{"Bearers3cret", http.StatusUnauthorized},
		{"s3cret", http.StatusUnauthorized},
	} {
		req := httptest.NewRequest("POST", mcpserver.Path, strings.NewReader(
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lower","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", tc.auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("initialize with Authorization %q: %d, want %d", tc.auth, rec.Code, tc.want)
		}
	}
}
