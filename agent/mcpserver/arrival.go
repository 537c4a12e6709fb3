package mcpserver

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// arrivalListener notes when each request reaches the server, for the
// lineup: the time its first bytes came, as the kernel saw them where it can
// tell (Linux); for the first request on a new connection, the time the
// connection came, which the client opened to send it (unless the request
// came much later: a connection a client keeps for later). Go reads
// connections in the order it schedules them, so the time a handler starts
// says little of which of two requests a fraction of a millisecond apart
// came first.
type arrivalListener struct {
	net.Listener
	line *lineup

	mu    sync.Mutex
	conns map[*arrivalConn]struct{}
}

func newArrivalListener(ln net.Listener, line *lineup) *arrivalListener {
	l := &arrivalListener{Listener: ln, line: line, conns: map[*arrivalConn]struct{}{}}
	stampListener(ln)
	if canTellUnread(ln) {
		line.unread = l.unread
	}
	return l
}

// Accept implements net.Listener.
func (l *arrivalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	ac := &arrivalConn{Conn: c, l: l, accepted: time.Now(), fresh: true}
	ac.stamps = newStampReader(c)
	// The request this connection was opened for has arrived: those that
	// come after it wait, a short while, for it to be read.
	ac.pending = []noted{{a: l.line.arrive(ac.accepted, true)}}
	l.mu.Lock()
	l.conns[ac] = struct{}{}
	l.mu.Unlock()
	return ac, nil
}

// unread tells whether a request waits in the accept queue, or on a
// connection waiting for its next request, unread.
func (l *arrivalListener) unread() bool {
	if acceptQueued(l.Listener) {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		c.mu.Lock()
		armed := c.armed
		c.mu.Unlock()
		if armed && bytesQueued(c.Conn) {
			return true
		}
	}
	return false
}

// arrivalConn is a connection that notes when each request on it arrived.
type arrivalConn struct {
	net.Conn
	l        *arrivalListener
	accepted time.Time
	stamps   stampReader // nil where the kernel's times cannot be read

	mu      sync.Mutex
	fresh   bool   // nothing was read yet: the first bytes belong to the arrival noted at accept
	armed   bool   // the next bytes read begin a request: an answer was written since the last
	writes  uint64 // writes so far
	closed  bool
	pending []noted // noted, not yet claimed by a handler
}

// noted is an arrival noted on a connection, and how many writes the
// connection had seen then.
type noted struct {
	a      *arrival
	writes uint64
}

// Read implements net.Conn.
func (c *arrivalConn) Read(p []byte) (int, error) {
	var n int
	var at time.Time
	var err error
	if c.stamps != nil {
		n, at, err = c.stamps.read(p)
	} else {
		n, err = c.Conn.Read(p)
		at = time.Now()
	}
	if n > 0 {
		c.noteArrival(at)
	}
	return n, err
}

// noteArrival notes, for bytes that came at at, the arrival of a request
// when they begin one. The lineup is called without the connection's lock:
// the lineup's own lock is taken first elsewhere (unread).
func (c *arrivalConn) noteArrival(at time.Time) {
	c.mu.Lock()
	fresh, armed, writes := c.fresh, c.armed, c.writes
	c.fresh, c.armed = false, false
	var first *arrival
	if fresh && len(c.pending) > 0 {
		first = c.pending[0].a
	}
	c.mu.Unlock()
	switch {
	case first != nil:
		if !at.Before(c.accepted) && at.Sub(c.accepted) < window {
			at = c.accepted
		} // else read late, or opened long before it was used
		first.retime(at)
	case !fresh && armed:
		a := c.l.line.arrive(at, false)
		c.mu.Lock()
		closed := c.closed
		if !closed {
			c.pending = append(c.pending, noted{a, writes})
		}
		c.mu.Unlock()
		if closed {
			a.leave()
		}
	}
}

// Write implements net.Conn. An answer being written means the next bytes
// the client sends are a new request: clients do not pipeline.
func (c *arrivalConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.armed = true
	c.writes++
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// Close implements net.Conn; what arrived on the connection and was never
// handled leaves the line.
func (c *arrivalConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	c.mu.Lock()
	pending := c.pending
	c.pending, c.closed = nil, true
	c.mu.Unlock()
	for _, p := range pending {
		p.a.leave()
	}
	return c.Conn.Close()
}

// claim hands the handler the arrival of its request. An arrival noted
// before something was written is not a request's: the rest of a body the
// server asked for with "100 Continue".
func (c *arrivalConn) claim() *arrival {
	c.mu.Lock()
	var stale []*arrival
	var a *arrival
	for len(c.pending) > 0 && a == nil {
		p := c.pending[0]
		c.pending = c.pending[1:]
		if p.writes < c.writes {
			stale = append(stale, p.a)
		} else {
			a = p.a
		}
	}
	c.mu.Unlock()
	for _, s := range stale {
		s.leave()
	}
	return a
}

type arrivalConnKey struct{}

// connContext keeps the connection in the context of its requests.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if ac, ok := c.(*arrivalConn); ok {
		return context.WithValue(ctx, arrivalConnKey{}, ac)
	}
	return ctx
}

type arrivalKey struct{}

// arrivals gives every request its arrival in its context, for front, and
// makes it leave the line once the request is over. A request that came on
// no connection the server noted (a Handler served by another server, or
// one pipelined behind another) arrives now.
func arrivals(line *lineup, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a *arrival
		if ac, ok := r.Context().Value(arrivalConnKey{}).(*arrivalConn); ok {
			a = ac.claim()
		}
		if a == nil {
			a = line.arrive(time.Now(), false)
		}
		defer a.leave()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), arrivalKey{}, a)))
	})
}

// arrivalOf is the arrival of a request that came through arrivals.
func arrivalOf(r *http.Request) *arrival {
	a, _ := r.Context().Value(arrivalKey{}).(*arrival)
	return a
}
