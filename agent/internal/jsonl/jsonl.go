// Package jsonl reads the JSON-lines streams the memory tool's faces take
// (memvault serve, the MCP server over stdio): one line at a time, at most a
// limit of bytes kept, and the id of a line too long to keep read from its start.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// Line is one line of a JSON-lines stream as ReadLine reads it: its bytes
// without the line ending, or that it was longer than the limit and its first
// bytes, or the read error that ended the input.
type Line struct {
	Text    []byte
	TooLong bool
	Head    []byte // when TooLong: up to idHead bytes from the start of the line
	Err     error
}

// idHead is how much of an over-long line is kept to find its id in.
const idHead = 4 << 10

// ReadLine reads one line without its line ending, keeping at most maxLine
// bytes of it. A last line without "\n" still counts; the error comes with the
// next call.
func ReadLine(r *bufio.Reader, maxLine int) Line {
	var req Line
	for {
		chunk, err := r.ReadSlice('\n')
		if !req.TooLong {
			if len(req.Text)+len(chunk) > maxLine+2 { // room for "\r\n"
				req.TooLong, req.Head, req.Text = true, lineHead(req.Text, chunk), nil
			} else {
				req.Text = append(req.Text, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(req.Text) > 0 || req.TooLong):
			return trimEOL(req, maxLine) // the error comes again on the next read
		case err != nil:
			return Line{Err: err}
		}
		return trimEOL(req, maxLine)
	}
}

func trimEOL(req Line, maxLine int) Line {
	req.Text = bytes.TrimSuffix(req.Text, []byte("\n"))
	req.Text = bytes.TrimSuffix(req.Text, []byte("\r"))
	if len(req.Text) > maxLine {
		req.TooLong, req.Head, req.Text = true, lineHead(req.Text, nil), nil
	}
	return req
}

// lineHead copies the first idHead bytes of the line made of a then b.
func lineHead(a, b []byte) []byte {
	head := make([]byte, 0, idHead)
	head = append(head, a[:min(len(a), idHead)]...)
	return append(head, b[:min(len(b), idHead-len(head))]...)
}

// LeadingID returns the id of a request whose text begins with head, when the
// request object's first member is "id" and its value ends within head; else
// nil. An over-long line is answered with it.
func LeadingID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	if tok, err := dec.Token(); err != nil || tok != "id" {
		return nil
	}
	var id json.RawMessage
	if err := dec.Decode(&id); err != nil {
		return nil
	}
	// A value cut at the end of head (a number, most likely) would decode as
	// another one: the member must be seen to end.
	rest := bytes.TrimLeft(head[dec.InputOffset():], " \t\r\n")
	if len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') {
		return nil
	}
	return id
}
