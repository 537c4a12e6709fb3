package agent

import (
	"bufio"
	"encoding/json"
)

// ToolName is the name of the memory tool in the model's tool_use blocks.
const ToolName = "memory"

// The memory tool has other faces than Handler and Serve: the MCP server
// (package agent/mcpserver) and the Claude agent loop (package agent/claude).
// What they must say exactly as the Handler does is here, so the text the
// model sees stays one.

// InternalAnswer is the answer text for a failure outside the memory tool
// contract, err as Run returned it: "Error: memvault: {command} failed:
// {what}", with {what} a short fixed description (no paths on the disk, no
// key material, no plaintext), as Handle answers.
func InternalAnswer(err error) string { return internalAnswer(err) }

// RecordView notes a read of file p in store, when store keeps views (as
// *vault.Vault does), so that memvault expire keeps a file a model is shown.
// A failure to note it is not the model's concern: at worst the file looks older.
func RecordView(store Store, p string) { recordView(store, p) }

// SelectLines turns view_range [a, b] into the 1-based lines first to last of a
// file of n lines, as view reads it; first > last when nothing is selected.
func SelectLines(a, b int64, n int) (first, last int) { return selectLines(a, b, n) }

// Line is one line of a JSON-lines stream as Serve reads it: its bytes
// without the line ending, or that it was longer than the limit and its
// first bytes, or the read error that ended the input.
type Line struct {
	Text    []byte
	TooLong bool
	Head    []byte // when TooLong: up to the first 4 KiB of the line
	Err     error
}

// ReadLine reads one line from r as Serve does, keeping at most maxLine bytes
// of it. A last line without "\n" still counts; the error (io.EOF at the end)
// comes with the next call.
func ReadLine(r *bufio.Reader, maxLine int) Line {
	req := readLine(r, maxLine)
	return Line{Text: req.line, TooLong: req.tooLong, Head: req.head, Err: req.err}
}

// LeadingID returns the id of a request whose text begins with head, when the
// request object's first member is "id" and its value ends within head; else
// nil. Serve answers an over-long line with it.
func LeadingID(head []byte) json.RawMessage { return leadingID(head) }
