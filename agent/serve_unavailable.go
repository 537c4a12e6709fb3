package agent

import (
	"context"
	"encoding/json"
	"io"

	"github.com/memvault/memvault/agent/internal/jsonl"
)

// ServeUnavailable answers every request line of r on w with reason, as an
// error answer in Serve's format carrying the request's id, until r ends (then
// it returns nil) or ctx ends. A program uses it in place of Serve when it
// could not open its vault (a damaged vault, an identity that cannot be read):
// a bridge that never reads the process's stderr, and the model behind it,
// still learn from each answer why memory does not work and what to do.
// reason is the whole answer, the fix included. Nothing is run.
func ServeUnavailable(ctx context.Context, reason string, r io.Reader, w io.Writer) error {
	a := Answer{Content: reason, IsError: true}
	return serveLines(ctx, r, w, DefaultMaxLine, func(req jsonl.Line) ([]byte, error) {
		id := jsonl.LeadingID(req.Head)
		if !req.TooLong {
			var fields struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(req.Text, &fields) == nil {
				id = fields.ID
			}
		}
		return answerLine(id, a), nil
	})
}
