package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/internal/jsonl"
)

// ServeStdio runs srv on in and out, newline-delimited JSON-RPC as on a
// process's stdin and stdout, until in ends or ctx does. Requests read before
// the end of in are answered before it counts, so a client (or a script) may
// close its side right after its last request; a subscriptions/listen still
// open then ends with it. It returns nil when in ends.
//
// The client's requests run one after another, in the order they arrived, so
// each sees what the ones before it did (a view sent right behind a create
// finds the file). The SDK alone would run them at once. A
// subscriptions/listen waits its turn but holds nobody up, since it has no
// answer until it ends.
//
// A line that is not one JSON-RPC message gets a JSON-RPC error answer and
// serving goes on, as agent.Serve does: not JSON, cut short or nested too deep
// (parse error, id null), a batch or JSON that is no message (invalid
// request), or longer than maxLine bytes (invalid request, with the id when
// the line starts with it; maxLine 0 means agent.DefaultMaxLine). The SDK's own
// reader would end the session at the first such line.
func ServeStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer, maxLine int) error {
	if maxLine <= 0 {
		maxLine = agent.DefaultMaxLine
	}
	p := &pending{ids: map[string]bool{}, changed: make(chan struct{})}
	w := &countWriter{w: out, p: p}
	t := &mcp.IOTransport{
		Reader: &frontReader{ctx: ctx, r: bufio.NewReader(in), max: maxLine, p: p, w: w},
		Writer: w,
		// The front passes only whole messages of at most maxLine bytes.
		MaxLineLength: -1,
	}
	err := srv.Run(ctx, t)
	if ctx.Err() == nil && (err == nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// pending holds the ids of the client's requests that have no answer yet,
// but for listens, which are not waited for.
type pending struct {
	mu      sync.Mutex
	ids     map[string]bool
	changed chan struct{} // closed and replaced at every change of ids
}

// add records the request id as waiting for its answer.
func (p *pending) add(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids[id] = true
	close(p.changed)
	p.changed = make(chan struct{})
}

// done records the answer to id, if it is one pending.
func (p *pending) done(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[id] {
		delete(p.ids, id)
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

// wait blocks until no request is pending or ctx ends.
func (p *pending) wait(ctx context.Context) {
	for {
		p.mu.Lock()
		n, ch := len(p.ids), p.changed
		p.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// message is what countWriter looks at in a JSON-RPC line.
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

// frontReader reads the client's lines for the SDK, one at a time: a line
// that is one JSON-RPC message passes, trimmed; any other gets its error
// answer here. A request passes only once every request before it is
// answered, which keeps the client's order. At the end of input it holds the
// end back until the requests read are answered.
type frontReader struct {
	ctx context.Context
	r   *bufio.Reader
	max int
	p   *pending
	w   *countWriter
	buf []byte // what is left of the line being passed
	err error  // the error that ended the input, given once buf is read
}

func (f *frontReader) Read(b []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		req := jsonl.ReadLine(f.r, f.max)
		if req.Err != nil {
			if req.Err == io.EOF {
				f.p.wait(f.ctx)
			}
			f.err = req.Err
			continue
		}
		line := bytes.TrimSpace(req.Text)
		if !req.TooLong && len(line) == 0 {
			continue
		}
		msg, refusal := f.check(req, line)
		if refusal != nil {
			if err := f.w.reply(refusal); err != nil {
				f.err = err
			}
			continue
		}
		if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
			f.p.wait(f.ctx)
			if r.Method != methodListen {
				var m message
				_ = json.Unmarshal(line, &m) // DecodeMessage read it
				f.p.add(idKey(m.ID))
			}
		}
		f.buf = append(line, '\n')
	}
	n := copy(b, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

func (f *frontReader) Close() error { return nil }

// check decodes a line as the SDK will, or returns the error answer to write.
func (f *frontReader) check(req jsonl.Line, line []byte) (jsonrpc.Message, []byte) {
	if req.TooLong {
		return nil, rpcError(jsonl.LeadingID(req.Head), jsonrpc.CodeInvalidRequest,
			"request line longer than "+strconv.Itoa(f.max)+" bytes, so nothing was run: send less at once, "+
				"or raise the limit in the vault's config: git --git-dir=VAULT config memvault.maxRequestLine BYTES")
	}
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		// Not JSON, cut short, or nested deeper than encoding/json goes.
		return nil, rpcError(nil, jsonrpc.CodeParseError, "parse error: "+err.Error())
	}
	if line[0] == '[' {
		return nil, rpcError(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message a line")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var m message
		_ = json.Unmarshal(line, &m)
		return nil, rpcError(m.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// rpcError renders a JSON-RPC error answer line. id is echoed when it is a
// string or a number; else the answer's id is null.
func rpcError(id json.RawMessage, code int, text string) []byte {
	if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(text) // a string always encodes
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":` + strconv.Itoa(code) + `,"message":`)
	b.Write(msg)
	b.WriteString("}}\n")
	return b.Bytes()
}

// methodListen is the request of the 2026-07-28 revision that opens a stream
// of notifications and has no answer until the stream ends.
const methodListen = "subscriptions/listen"

// idKey names a request id, as JSON, the same however the id was spelled
// (7, 7.0 and 7e0 alike; 7 and "7" apart).
func idKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v) // what was just decoded encodes
	return string(b)
}

// countWriter notes the answers written (an id and no method). Its lock
// keeps the front's error answers whole between the SDK's lines.
type countWriter struct {
	mu sync.Mutex
	w  io.Writer
	p  *pending
	l  lines
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.w.Write(b)
	c.l.feed(b[:n], func(m message) {
		if m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null" {
			c.p.done(idKey(m.ID))
		}
	})
	return n, err
}

// reply writes an answer of the front's own: it answers no counted request.
func (c *countWriter) reply(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.w.Write(b)
	return err
}

func (c *countWriter) Close() error { return nil }
