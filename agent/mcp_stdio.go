package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeMCPStdio runs srv on in and out, newline-delimited JSON-RPC as on a
// process's stdin and stdout, until in ends or ctx does. Requests read before
// the end of in are answered before it counts, so a client (or a script) may
// close its side right after its last request. It returns nil when in ends.
func ServeMCPStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer) error {
	p := &pending{changed: make(chan struct{})}
	t := &mcp.IOTransport{
		Reader: &drainReader{ctx: ctx, r: in, p: p},
		Writer: &countWriter{w: out, p: p},
	}
	err := srv.Run(ctx, t)
	if ctx.Err() == nil && (err == nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// pending counts the client's requests that have no answer yet.
type pending struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced at every change of n
}

func (p *pending) add(d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += d
	close(p.changed)
	p.changed = make(chan struct{})
}

// wait blocks until no request is pending or ctx ends.
func (p *pending) wait(ctx context.Context) {
	for {
		p.mu.Lock()
		n, ch := p.n, p.changed
		p.mu.Unlock()
		if n <= 0 {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// message is what drainReader and countWriter look at in a JSON-RPC line.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lines calls fn for each complete line that passes through, keeping the rest.
type lines struct{ buf []byte }

func (l *lines) feed(b []byte, fn func(message)) {
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return
		}
		var m message
		if json.Unmarshal(l.buf[:i], &m) == nil {
			fn(m)
		}
		l.buf = l.buf[i+1:]
	}
}

// drainReader counts the requests read (a method and an id) and holds the end
// of input back until they are answered.
type drainReader struct {
	ctx context.Context
	r   io.Reader
	p   *pending
	l   lines
}

func (d *drainReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	d.l.feed(b[:n], func(m message) {
		if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
			d.p.add(1)
		}
	})
	if err == io.EOF {
		d.p.wait(d.ctx)
	}
	return n, err
}

func (d *drainReader) Close() error { return nil }

// countWriter counts the answers written (an id and no method).
type countWriter struct {
	w io.Writer
	p *pending
	l lines
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.l.feed(b[:n], func(m message) {
		if m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null" {
			c.p.add(-1)
		}
	})
	return n, err
}

func (c *countWriter) Close() error { return nil }
