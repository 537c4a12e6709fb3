package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// FuzzServe: Serve reads requests from whatever a bridge sends. It never
// panics, ends only with its input, and answers every request line (each
// non-blank line, and each over-long one) with exactly one well-formed answer
// line.
func FuzzServe(f *testing.F) {
	const maxLine = 256
	v := vaulttest.New(f)
	h := agent.New(v, agent.Options{MaxLine: maxLine})
	for i, in := range agenttest.HostileInputs {
		f.Add([]byte(`{"id":` + string(rune('0'+i%10)) + `,"input":` + in + "}\n"))
	}
	f.Add([]byte(`{"id":1,"input":{"command":"create","path":"/memories/a.md","file_text":"a\nb"}}` + "\r\n" +
		`{"id":2,"input":{"command":"insert","path":"/memories/a.md","insert_line":1,"insert_text":"c"}}` + "\n\n \t\n" +
		`{"id":[],"input":{"command":"view","path":"/memories/a.md"},"tool_use_id":null}`))
	f.Add([]byte("\x00\n\xff\xfe\n{\n}\n{}\nnull\n\"x\"\n" + strings.Repeat("x", maxLine+1) + "\n" + strings.Repeat(" ", maxLine+5)))
	f.Add([]byte(`{"id":1e999,"input":{}}` + "\n" + `{"id":"\u2028","input":{"command":"view","path":"/memories"},"tool_use_id":"</script>"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := agent.Serve(context.Background(), h, bytes.NewReader(in), &out); err != nil {
			t.Fatalf("Serve = %v, want nil at the end of its input", err)
		}
		want := requestLines(in, maxLine)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			lines = nil
		}
		if len(lines) != want {
			t.Fatalf("Serve answered %d lines to %d requests:\nin  %q\nout %q", len(lines), want, in, out.String())
		}
		for _, l := range lines {
			var a struct {
				ID      json.RawMessage `json:"id"`
				Content *string         `json:"content"`
				IsError *bool           `json:"is_error"`
			}
			if err := json.Unmarshal([]byte(l), &a); err != nil || a.Content == nil || a.IsError == nil || len(a.ID) == 0 {
				t.Fatalf("answer line %q is not {id, content, is_error}: %v", l, err)
			}
		}
	})
}

// requestLines counts the requests Serve sees in in: lines split on "\n", one
// "\r" dropped from each, blank ones skipped unless over maxLine.
func requestLines(in []byte, maxLine int) int {
	n := 0
	for i, l := range bytes.Split(in, []byte("\n")) {
		if i == bytes.Count(in, []byte("\n")) && len(l) == 0 {
			break // after the last "\n"
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) > maxLine || len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}
