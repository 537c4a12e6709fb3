package gittest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestBackendShortBody: a push whose client gives up in the middle of its body
// (the request says 100,000 bytes and brings 4) ends its git http-backend, so
// the server's handler returns and the server can close. Before Backend kept
// the length from git, that git process spun for ever and the server's Close
// never returned.
func TestBackendShortBody(t *testing.T) {
	backend := Handler(t)
	backend.Stderr = io.Discard // git says the request ended early
	served := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { served <- struct{}{} }()
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	req := "POST /vault.git/git-receive-pack HTTP/1.1\r\n" +
		"Host: " + srv.Listener.Addr().String() + "\r\n" +
		"Content-Type: application/x-git-receive-pack-request\r\n" +
		"Content-Length: 100000\r\n\r\n" +
		"00a0" // the start of a pkt-line, the rest never sent
	if _, err := fmt.Fprint(c, req); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// A generous bound on a hang, not a timing: git ends at once.
	select {
	case <-served:
	case <-time.After(time.Minute):
		t.Fatal("git http-backend still serves a request whose client left a minute ago")
	}
}
