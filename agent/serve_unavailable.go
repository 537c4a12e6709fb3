package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// ServeUnavailable answers every request line of r on w with reason, as an
// error answer in Serve's format carrying the request's id, until r ends (then
// it returns nil) or ctx ends. A program uses it in place of Serve when it
// could not open its vault (a damaged vault, an identity that cannot be read):
// a bridge that never reads the process's stderr, and the model behind it,
// still learn from each answer why memory does not work and what to do.
// reason is the whole answer, the fix included. Nothing is run.
func ServeUnavailable(ctx context.Context, reason string, r io.Reader, w io.Writer) error {
	lines := make(chan request)
	go readRequests(ctx, bufio.NewReader(r), DefaultMaxLine, lines)
	a := Answer{Content: reason, IsError: true}
	for {
		var req request
		select {
		case <-ctx.Done():
			return ctx.Err()
		case req = <-lines:
		}
		if req.err == io.EOF {
			return nil
		}
		if req.err != nil {
			return fmt.Errorf("agent: serve: read: %w", req.err)
		}
		id := leadingID(req.head)
		if !req.tooLong {
			var fields struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(req.line, &fields) == nil {
				id = fields.ID
			}
		}
		if _, err := w.Write(answerLine(id, a)); err != nil {
			return fmt.Errorf("agent: serve: write: %w", err)
		}
	}
}
