package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/agent/internal/jsonl"
	"github.com/memvault/memvault/vault"
)

// DefaultMaxLine is the longest request line Serve accepts unless Options.MaxLine
// or the vault's maxRequestLine says otherwise: room for a file at the default
// 1 MiB size limit even when JSON escaping makes every byte six.
const DefaultMaxLine = vault.DefaultMaxRequestLine

// Serve answers JSON-lines requests from r on w, one at a time and in order,
// until r ends (then it returns nil) or ctx ends (then it returns ctx.Err()).
//
// A request is one line holding an object
//
//	{"id": <any JSON>, "input": {<tool input>}, "tool_use_id": "<id>"}
//
// where id and tool_use_id are optional, and its answer is one line
//
//	{"id": <the id, byte for byte>, "content": "<text>", "is_error": <bool>}
//
// Every line gets its answer, a blank one too, so a bridge that counts lines
// never waits for an answer that is not coming. A line that is not a request
// (blank, not a JSON object, cut short, no input, a tool_use_id that is not a
// string, longer than the line limit: Options.MaxLine, else the vault's
// maxRequestLine) gets an answer "Error: Invalid request: {reason}" with its
// id, or null if none can be read, and serving goes on. So does a failure outside the contract, answered as
// Handle does. The id of a line too long to keep is read from its first 4 KiB,
// so it is echoed when the line begins with it, as the bridges write it.
// Serve returns an error only when ctx ends, or reading r or writing w fails.
// A read blocked in r when ctx ends is left to finish in the background.
func Serve(ctx context.Context, h *Handler, r io.Reader, w io.Writer) error {
	return serveLines(ctx, r, w, h.maxLine(), func(req jsonl.Line) ([]byte, error) {
		return h.serveOne(ctx, req)
	})
}

// serveLines reads request lines of at most maxLine bytes from r and writes
// answer's line for each to w, until the input ends (nil), ctx ends, or reading
// or writing fails.
func serveLines(ctx context.Context, r io.Reader, w io.Writer, maxLine int, answer func(jsonl.Line) ([]byte, error)) error {
	lines := make(chan jsonl.Line)
	go readRequests(ctx, bufio.NewReader(r), maxLine, lines)
	for {
		var req jsonl.Line
		select {
		case <-ctx.Done():
			return ctx.Err()
		case req = <-lines:
		}
		if req.Err == io.EOF {
			return nil
		}
		if req.Err != nil {
			return fmt.Errorf("agent: serve: read: %w", req.Err)
		}
		out, err := answer(req)
		if err != nil {
			return err
		}
		if _, err := w.Write(out); err != nil {
			return fmt.Errorf("agent: serve: write: %w", err)
		}
	}
}

// readRequests sends the lines of r, then the error that ended it.
func readRequests(ctx context.Context, r *bufio.Reader, maxLine int, out chan<- jsonl.Line) {
	for {
		req := jsonl.ReadLine(r, maxLine)
		select {
		case out <- req:
		case <-ctx.Done():
			return
		}
		if req.Err != nil {
			return
		}
	}
}

// serveOne runs one request and renders its answer line. Its error is ctx's,
// when ctx ended while the request ran.
func (h *Handler) serveOne(ctx context.Context, req jsonl.Line) ([]byte, error) {
	if req.TooLong {
		return answerLine(jsonl.LeadingID(req.Head), h.lineTooLong()), nil
	}
	if len(bytes.TrimSpace(req.Text)) == 0 {
		return answerLine(nil, invalidRequest(blankLine)), nil
	}
	if cutShort(req.Text) {
		return answerLine(jsonl.LeadingID(req.Text), invalidRequest(lineCutShort)), nil
	}
	var fields map[string]json.RawMessage
	if !json.Valid(req.Text) || bytes.TrimLeft(req.Text, " \t\r")[0] != '{' || json.Unmarshal(req.Text, &fields) != nil {
		return answerLine(nil, invalidRequest("not a JSON object")), nil
	}
	id := fields["id"]
	input, ok := fields["input"]
	if !ok {
		return answerLine(id, invalidRequest("no input")), nil
	}
	var toolUseID string
	if raw := fields["tool_use_id"]; !isNull(raw) && json.Unmarshal(raw, &toolUseID) != nil {
		return answerLine(id, invalidRequest("tool_use_id is not a string")), nil
	}
	a, err := h.Run(ctx, input, toolUseID)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, ctx.Err()
		}
		a = Answer{Content: contract.InternalAnswer(err), IsError: true}
	}
	return answerLine(id, a), nil
}

// Reasons for lines that hold no whole request: each says how to send one.
const (
	blankLine    = "a blank line, so nothing was run. Send one request, a JSON object, on each line"
	lineCutShort = "the line ends before its JSON object does (cut short, or spread over several " +
		"lines), so nothing was run. Send each request whole, as one line of JSON"
)

// cutShort reports whether line is the start of a JSON value that ends
// before the value does: a request cut short, or the first line of one
// pretty-printed over several.
func cutShort(line []byte) bool {
	var v any
	return errors.Is(json.NewDecoder(bytes.NewReader(line)).Decode(&v), io.ErrUnexpectedEOF)
}

func (h *Handler) maxLine() int {
	if h.opts.MaxLine > 0 {
		return h.opts.MaxLine
	}
	if n := h.store.Limits().MaxRequestLine; n > 0 {
		return n
	}
	return DefaultMaxLine
}

// lineTooLong answers a request line over the limit: what happened, and the
// two ways on, one for the model and one for whoever runs memvault. The limit
// comes from Options.MaxLine when the program set it, else from the vault's
// config, whose key the answer names.
func (h *Handler) lineTooLong() Answer {
	raise := "or raise the limit in the vault's config: git --git-dir=VAULT config memvault.maxRequestLine BYTES"
	if h.opts.MaxLine > 0 {
		raise = "or raise the limit the program serving memory sets (agent.Options.MaxLine)"
	}
	return invalidRequest("line longer than " + strconv.Itoa(h.maxLine()) + " bytes, so nothing was run. " +
		"Send a shorter request (less file_text at once), " + raise)
}

func invalidRequest(reason string) Answer {
	return Answer{Content: "Error: Invalid request: " + reason, IsError: true}
}

// answerLine renders an answer line. id is echoed exactly as the request had it
// (null when nil); content is JSON-escaped without HTML escaping.
func answerLine(id json.RawMessage, a Answer) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(id)
	b.WriteString(`,"content":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(a.Content) // a string always encodes; Encode adds a "\n"
	b.Truncate(b.Len() - 1)
	b.WriteString(`,"is_error":` + strconv.FormatBool(a.IsError) + "}\n")
	return b.Bytes()
}
