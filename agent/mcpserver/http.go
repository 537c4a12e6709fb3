package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
)

// ErrNotLoopback is returned by Listen for an address that is not on the
// loopback interface when HTTPOptions do not allow it.
var ErrNotLoopback = errors.New("not a loopback address")

// ErrNoToken is returned by ServeHTTP when HTTPOptions hold no Token and do
// not say NoAuth: loopback is reachable by every account on the machine, so
// a server without a token would answer any local user.
var ErrNoToken = errors.New("no bearer token (and authentication not turned off)")

// HTTPOptions configure MCP over streamable HTTP.
type HTTPOptions struct {
	// Token is the bearer token every request must carry, as
	// "Authorization: Bearer <token>". It is needed unless NoAuth is set.
	Token string
	// NoAuth serves without a token: anyone who can reach the address,
	// every local user on loopback, reads and writes the vault. It is
	// ignored when Token is set.
	NoAuth bool
	// AllowRemote permits listening on an address that is not loopback.
	// It takes effect only with a Token.
	AllowRemote bool
	// BodyTimeout bounds, in ServeHTTP, how long a request (its headers
	// and body) may take to arrive; 0 means DefaultBodyTimeout. The event
	// streams the server sends are not bounded by it.
	BodyTimeout time.Duration
	// MaxBody bounds a request's body, in bytes; a longer one gets 413. 0
	// means agent.DefaultMaxLine, the limit of a memvault serve line.
	MaxBody int64
}

// DefaultBodyTimeout is how long a request body may take unless HTTPOptions
// says otherwise: an agent.DefaultMaxLine body at 140 KB/s.
const DefaultBodyTimeout = time.Minute

// headerTimeout bounds how long a request's headers may take, and idleTimeout
// how long a kept-alive connection may wait for its next request.
const (
	headerTimeout = 10 * time.Second
	idleTimeout   = 2 * time.Minute
)

// Listen listens on the TCP address addr for MCP over HTTP. An address
// without a host ("8080" or ":8080") means 127.0.0.1. Unless opts.AllowRemote
// is set and opts.Token is not empty, it refuses, with an error wrapping
// ErrNotLoopback, any address that is not loopback, including the unspecified
// 0.0.0.0 and ::, and host names that resolve to anything else.
func Listen(ctx context.Context, addr string, opts HTTPOptions) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil && !strings.Contains(addr, ":") {
		host, port, err = "", addr, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent: mcp: listen %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	remote := opts.AllowRemote && opts.Token != ""
	if !remote {
		ok, err := isLoopbackHost(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("agent: mcp: listen %q: %w", addr, err)
		}
		if !ok {
			return nil, fmt.Errorf("agent: mcp: listen %q: %w", addr, ErrNotLoopback)
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("agent: mcp: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !remote && (!ok || !tcp.IP.IsLoopback()) {
		ln.Close()
		return nil, fmt.Errorf("agent: mcp: listen %q: %w", addr, ErrNotLoopback)
	}
	return ln, nil
}

// isLoopbackHost tells whether every address host stands for is loopback.
func isLoopbackHost(ctx context.Context, host string) (bool, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false, err
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}

// Path is the path of the URL to give MCP clients. Clients such as the MCP
// Inspector take a URL that does not end in /mcp for the older SSE transport.
const Path = "/mcp"

// Handler serves srv over MCP's streamable HTTP transport at Path, and at
// every other path too, so a client set up with the bare address still works.
// Every protocol revision the SDK knows is served on that one endpoint: those
// with sessions (Mcp-Session-Id, up to 2025-11-25) and 2026-07-28, which has
// none; a client of the latter is given a session of memvault's own for its
// commits, kept while it comes back within an hour. Each client's requests
// are answered as if run one after another in the order they arrived:
// served by ServeHTTP, the order they reached the server, which a request
// takes before its body is read (see lineup); served by another server,
// the order their handlers start.
// A request body may hold at most opts.MaxBody bytes.
// A request without the bearer token opts.Token gets 401; the token is
// compared in constant time. Without a token every request gets 401, unless
// opts.NoAuth says to serve without one. Browser requests from another origin are
// refused, and so are requests to a loopback address naming another host (the
// SDK's protection against DNS rebinding).
func Handler(srv *mcp.Server, opts HTTPOptions) http.Handler {
	h, _ := newHandler(srv, opts)
	return h
}

// newHandler is Handler, with the lineup that keeps its clients' requests in
// order, for a server that notes when they arrived.
func newHandler(srv *mcp.Server, opts HTTPOptions) (http.Handler, *lineup) {
	line := &lineup{}
	maxBody := opts.MaxBody
	if maxBody <= 0 {
		maxBody = agent.DefaultMaxLine
	}
	get := func(*http.Request) *mcp.Server { return srv }
	var h http.Handler = &front{
		line:    line,
		maxBody: maxBody,
		nsessions: func() int {
			n := 0
			for range srv.Sessions() {
				n++
			}
			return n
		},
		stateful: mcp.NewStreamableHTTPHandler(get,
			&mcp.StreamableHTTPOptions{SessionTimeout: sessionIdle, MaxRequestBodyBytes: maxBody}),
		stateless: mcp.NewStreamableHTTPHandler(get,
			&mcp.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: maxBody}),
	}
	h = http.NewCrossOriginProtection().Handler(h)
	if opts.Token == "" && opts.NoAuth {
		return arrivals(line, h), line
	}
	want := sha256.Sum256([]byte(opts.Token))
	return arrivals(line, authorized(h, opts.Token, want)), line
}

// authorized passes on the requests that carry the bearer token whose
// SHA-256 is want, and answers the others 401.
func authorized(h http.Handler, token string, want [sha256.Size]byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearerToken(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		// Hashing first makes the comparison constant-time in the token's length too.
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memvault"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme, whose name HTTP compares without regard to case (RFC 9110, 11.1):
// "bearer x" is as good as "Bearer x".
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}

// ServeHTTP serves srv over streamable HTTP on ln, as Handler does,
// until ctx ends; then it shuts the server down and returns nil. It closes ln.
// Without opts.Token or opts.NoAuth it serves nothing and returns an error
// wrapping ErrNoToken.
func ServeHTTP(ctx context.Context, srv *mcp.Server, ln net.Listener, opts HTTPOptions) error {
	if opts.Token == "" && !opts.NoAuth {
		ln.Close()
		return fmt.Errorf("agent: mcp: serve: %w", ErrNoToken)
	}
	// ReadTimeout bounds the headers and body of each request: a client that
	// sends its headers and trickles the body (or sends none) would otherwise
	// hold a connection and a handler for good. It does not end the event
	// streams: net/http lifts the read deadline once a body has been read.
	// No WriteTimeout, which would.
	timeout := opts.BodyTimeout
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	h, line := newHandler(srv, opts)
	ln = newArrivalListener(ln, line)
	hs := &http.Server{
		Handler:           h,
		ConnContext:       connContext,
		ReadHeaderTimeout: min(headerTimeout, timeout),
		ReadTimeout:       timeout,
		IdleTimeout:       idleTimeout,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("agent: mcp: serve: %w", err)
	case <-ctx.Done():
	}
	// Event streams stay open; give requests in flight a moment, then close.
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	<-done
	return nil
}
