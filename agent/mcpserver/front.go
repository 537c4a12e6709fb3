package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// firstStateless is the first protocol revision without sessions or an
// initialize handshake (2026-07-28): each request carries its protocol
// version, the client's capabilities and name, in _meta and headers. The SDK
// serves it over HTTP only from a handler that keeps no sessions, so the front
// sends those requests to one, and the older revisions to one that does.
const firstStateless = "2026-07-28"

// sessionHeader carries, from the front to the tools, the session a request
// of a revision without sessions belongs to. The front sets it on those
// requests and strips it from every other, so a client cannot choose it.
const sessionHeader = "Memvault-Session"

// sessionIdle is how long a client of a revision without sessions may go
// quiet and still be in the same session: the life of an idle session of the
// older revisions.
const sessionIdle = time.Hour

// front is the HTTP face of the MCP server: it sends each request to the SDK
// handler for its protocol revision, on one endpoint, and runs each client's
// requests in the order they arrived.
type front struct {
	maxBody   int64
	nsessions func() int   // sessions the server holds now
	streams   atomic.Int64 // event streams held open now
	stateful  http.Handler // revisions up to 2025-11-25, with Mcp-Session-Id
	stateless http.Handler // 2026-07-28 and later
	line      *lineup
	sessions  clientSessions
}

// Bounds on what clients hold open in the server, each a few kilobytes to
// tens of kilobytes: tens of thousands of sessions, or thousands of held
// event streams, once took hundreds of megabytes.
const (
	maxSessions       = 1000 // sessions of the revisions that have them
	maxStreams        = 256  // event streams held open: standalone GETs and listens
	maxClientSessions = 1024 // memvault's own sessions for clients without
)

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(sessionHeader)
	modern := r.Header.Get("Mcp-Protocol-Version") >= firstStateless
	if r.Method != http.MethodPost {
		if a := arrivalOf(r); a != nil {
			a.leave() // in no line: those behind it need not wait
		}
	}
	if r.Method == http.MethodGet {
		if !f.holdStream(w) {
			return
		}
		defer f.streams.Add(-1)
	}
	if r.Method != http.MethodPost {
		f.handler(modern).ServeHTTP(w, r)
		return
	}
	// A body that says it is too long is refused before any of it is read:
	// net/http then reads the rest of a short one away and keeps the
	// connection, where a refusal midway closes it, and a client still
	// sending meets a reset connection in place of the 413.
	if r.ContentLength > f.maxBody {
		tooLarge(w, f.maxBody)
		return
	}
	// The request is placed in the line of its group by the time it
	// reached the server, before its body is read: bodies are read in
	// whatever order Go schedules the connections.
	place := arrivalOf(r)
	if place == nil {
		place = f.line.arrive(time.Now(), false)
	}
	defer place.leave()
	place.place(arrivalGroup(r, modern))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.maxBody))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			tooLarge(w, mbe.Limit)
			return
		}
		http.Error(w, "cannot read the request body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	calls := readCalls(body)
	sid := r.Header.Get("Mcp-Session-Id")
	if calls.discover && sid == "" {
		// Discovery lists the revisions the server speaks; only the handler
		// without sessions counts 2026-07-28 among them.
		modern = true
	}
	if !modern && sid == "" && calls.n > 0 && f.nsessions != nil && f.nsessions() >= maxSessions {
		http.Error(w, fmt.Sprintf("memvault: too many MCP sessions: the server holds its limit of %d; "+
			"end one (DELETE with its Mcp-Session-Id) or wait for an idle one to close (after %v)", maxSessions, sessionIdle),
			http.StatusServiceUnavailable)
		return
	}
	if calls.listen {
		if !f.holdStream(w) {
			return
		}
		defer f.streams.Add(-1)
	}
	var key string
	switch {
	case modern && calls.n > 0:
		key = "client " + clientKey(r, calls.client)
		r.Header.Set(sessionHeader, f.sessions.id(key, time.Now()))
	case sid != "":
		key = "session " + sid
	}
	if calls.n == 0 || key == "" {
		place.leave() // in no line: those behind it need not wait
		if calls.opens && calls.hasID && sid == "" {
			// An initialize makes a session, whose line expects the id
			// after this one next, and waits for it when a later one comes
			// first.
			w = &seedWriter{ResponseWriter: w, seed: func(sid string) { f.line.seed("session "+sid, calls.id+1) }}
		}
		f.handler(modern).ServeHTTP(w, r)
		return
	}
	done, err := place.join(r.Context(), call{key: key, id: calls.id, hasID: calls.hasID, opens: calls.opens})
	if err != nil {
		return // the client is gone
	}
	if calls.listen {
		// A listen is answered only when it ends: the requests behind it go
		// once it is in place, which its acknowledgement, the first thing
		// written, tells.
		w = &firstWrite{ResponseWriter: w, then: done}
	}
	f.handler(modern).ServeHTTP(w, r)
	if modern {
		f.sessions.id(key, time.Now()) // a long listen keeps its session
	}
}

// arrivalGroup is what a request's headers tell of the client it comes from,
// before its body is read: the session it names, or else its host and
// credentials. Requests of one line (see ServeHTTP) are always of one group.
func arrivalGroup(r *http.Request, modern bool) string {
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && !modern {
		return "session " + sid
	}
	return "client " + clientKey(r, "")
}

// holdStream counts an event stream about to be held open, or answers 503
// and reports false when the server holds its limit.
func (f *front) holdStream(w http.ResponseWriter) bool {
	if f.streams.Add(1) > maxStreams {
		f.streams.Add(-1)
		http.Error(w, fmt.Sprintf("memvault: too many open MCP event streams: the server holds its limit of %d; "+
			"close one or try again later", maxStreams), http.StatusServiceUnavailable)
		return false
	}
	return true
}

func (f *front) handler(modern bool) http.Handler {
	if modern {
		return f.stateless
	}
	return f.stateful
}

// calls is what the front needs to know of the requests in a body.
type calls struct {
	n                int    // requests with an id (not notifications, not answers)
	listen, discover bool   // among them a subscriptions/listen, a server/discover
	client           string // the client's name and version, from the first one's _meta
	id               int64  // the first one's id, when it is a number (hasID)
	hasID            bool
	opens            bool // the first one is an initialize or a server/discover
}

// readCalls reads the requests in a body, one message or a batch. A body it
// cannot read has none; the SDK answers it.
func readCalls(body []byte) calls {
	body = bytes.TrimSpace(body)
	var msgs []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return calls{}
		}
	} else {
		msgs = []json.RawMessage{body}
	}
	var c calls
	for _, raw := range msgs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					Client *struct {
						Name    string `json:"name"`
						Version string `json:"version"`
					} `json:"io.modelcontextprotocol/clientInfo"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
			continue
		}
		if c.n == 0 {
			if n, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
				c.id, c.hasID = n, true
			}
			c.opens = m.Method == "initialize" || m.Method == "server/discover"
		}
		c.n++
		c.listen = c.listen || m.Method == methodListen
		c.discover = c.discover || m.Method == "server/discover"
		if ci := m.Params.Meta.Client; ci != nil && c.client == "" {
			c.client = ci.Name + "\x00" + ci.Version
		}
	}
	return c
}

// clientKey tells clients of a revision without sessions apart, as well as
// their requests allow: the same name and version, from the same host, with
// the same credentials, is the same client. Two instances of one program on
// one host share a key, so their requests keep one order between them.
func clientKey(r *http.Request, client string) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	h := sha256.New()
	for _, s := range []string{host, r.Header.Get("Authorization"), client} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// clientSessions gives each client of a revision without sessions a session
// of memvault's own, which lasts while the client keeps coming back within
// sessionIdle: what the commits' Session trailer records.
type clientSessions struct {
	mu    sync.Mutex
	byKey map[string]*clientSession
}

type clientSession struct {
	id   string
	seen time.Time
}

// id returns the session of the client key at now, a new one after a quiet
// spell longer than sessionIdle.
func (c *clientSessions) id(key string, now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string]*clientSession{}
	}
	s := c.byKey[key]
	if s == nil || now.Sub(s.seen) > sessionIdle {
		if len(c.byKey) >= maxClientSessions {
			oldest := ""
			for k, s := range c.byKey {
				if now.Sub(s.seen) > sessionIdle {
					delete(c.byKey, k)
				} else if oldest == "" || s.seen.Before(c.byKey[oldest].seen) {
					oldest = k
				}
			}
			if len(c.byKey) >= maxClientSessions {
				delete(c.byKey, oldest) // it gets a new session when it comes back
			}
		}
		s = &clientSession{id: newSessionID()}
		c.byKey[key] = s
	}
	s.seen = now
	return s.id
}

// seedWriter hands seed the session an answer names, as it is written.
type seedWriter struct {
	http.ResponseWriter
	seed func(sid string)
	done bool
}

func (s *seedWriter) check() {
	if !s.done {
		s.done = true
		if sid := s.Header().Get("Mcp-Session-Id"); sid != "" {
			s.seed(sid)
		}
	}
}

// WriteHeader implements http.ResponseWriter.
func (s *seedWriter) WriteHeader(code int) {
	s.check()
	s.ResponseWriter.WriteHeader(code)
}

func (s *seedWriter) Write(b []byte) (int, error) {
	s.check()
	return s.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, which the event streams need.
func (s *seedWriter) Flush() {
	s.check()
	http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (s *seedWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// firstWrite calls then at the first write of the body.
type firstWrite struct {
	http.ResponseWriter
	then func()
}

func (f *firstWrite) Write(b []byte) (int, error) {
	f.then()
	return f.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, which the event streams need.
func (f *firstWrite) Flush() {
	http.NewResponseController(f.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (f *firstWrite) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// tooLarge answers a request whose body is over limit bytes.
func tooLarge(w http.ResponseWriter, limit int64) {
	http.Error(w, fmt.Sprintf("request body exceeds %d bytes", limit), http.StatusRequestEntityTooLarge)
}
