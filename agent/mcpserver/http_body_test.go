package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestMCPHTTPBodyTimeout: a client that sends a request's headers
// and then trickles its body is cut off once the body timeout passes, instead
// of holding a connection and a handler for as long as it likes; a session's
// event stream, a long GET, lives on past that timeout and still brings the
// server's notifications (a server ReadTimeout would end it).
func TestMCPHTTPBodyTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	v := vaulttest.New(t)
	opts := mcpserver.HTTPOptions{BodyTimeout: timeout, MaxBody: 4096, NoAuth: true}
	ln, err := mcpserver.Listen(ctx, "127.0.0.1:0", opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	done := make(chan error, 1)
	srv := mcpserver.New(v, mcpserver.Options{Poll: 100 * time.Millisecond})
	go func() { done <- mcpserver.ServeHTTP(ctx, srv.Server, ln, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP = %v", err)
		}
		srv.Close()
	})
	addr := ln.Addr().String()

	// A session whose event stream (the standalone GET) this test holds
	// itself: a revision that has sessions and that stream.
	url := "http://" + addr + mcpserver.Path
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stream", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET the event stream: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET the event stream: %s", res.Status)
	}
	const ended = "\x00ended" // no line of an event stream
	opened := time.Now()
	events := make(chan string, 64) // the stream's lines, then ended
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
		events <- ended
	}()

	// Headers, then one byte of a 1,000-byte body every 50ms: 50s in all.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n", mcpserver.Path, addr)
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, _ := io.ReadAll(conn) // until the server closes; a reset ends it too
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("a trickled body held the connection %v; want it cut off after about %v", took, timeout)
	} else {
		t.Logf("a trickled body was cut off after %v: %q", took.Round(time.Millisecond), firstLine(resp))
	}
	if strings.HasPrefix(string(resp), "HTTP/1.1 200") {
		t.Errorf("a trickled body got %q, want no success", firstLine(resp))
	}

	// By now the event stream has been open for several body timeouts.
	time.Sleep(3 * timeout)
	err = v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/late.md", []byte("late\n"))
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		line := waitFor(t, events, "resources/list_changed on the event stream")
		if line == ended {
			t.Fatalf("the event stream ended %v after it was opened, before the change was sent", time.Since(opened))
		}
		if strings.Contains(line, "notifications/resources/list_changed") {
			break
		}
	}
	if got, isErr := callMemory(t, cs, `{"command":"view","path":"/memories/late.md"}`, ""); isErr {
		t.Errorf("view after the body timeout = %q, error", got)
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\r\n")
	return s
}

// TestMCPHTTPMaxBody: a body over MaxBody is refused with 413. One whose
// length is declared is refused before it is read, and the connection stays
// open (a refusal midway closes it, and a client still sending its body then
// meets a reset connection instead of the answer); one of no declared length
// is cut off at the bound.
func TestMCPHTTPMaxBody(t *testing.T) {
	ctx := context.Background()
	v := vaulttest.New(t)
	opts := mcpserver.HTTPOptions{MaxBody: 4096, NoAuth: true}
	url := serveStore(t, v, mcpserver.Options{}, opts)
	big := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	post := func(ctx context.Context, body io.Reader) *http.Request {
		req, err := http.NewRequestWithContext(ctx, "POST", url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return req
	}

	// Go's client, which sends the whole body before it reads an answer.
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	res, err := client.Do(post(ctx, strings.NewReader(big)))
	if err != nil {
		t.Fatalf("POST of 5 KB: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of 5 KB with MaxBody 4096: %s, want 413", res.Status)
	}

	// Two such requests written at once on one connection: each is answered,
	// so the first refusal left the connection open.
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", u.Path, u.Host, len(big), big)
	if _, err := io.WriteString(conn, req+req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i := range 2 {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d to two POSTs of 5 KB on one connection: %v (the refusal closed it)", i+1, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %d of 5 KB on one connection: %s, want 413", i+1, res.Status)
		}
	}

	// No declared length: straight to the handler, with no connection that a
	// refusal midway could close under a client still sending.
	srv := mcpserver.New(v, mcpserver.Options{})
	defer srv.Close()
	rec := httptest.NewRecorder()
	mcpserver.Handler(srv.Server, opts).ServeHTTP(rec, post(ctx, struct{ io.Reader }{strings.NewReader(big)}))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of 5 KB and no declared length with MaxBody 4096: %d, want 413", rec.Code)
	}
}
