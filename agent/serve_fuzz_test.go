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
// line, blank or over-long ones too) with exactly one well-formed answer line.
func FuzzServe(f *testing.F) {
	const maxLine = 256
	v := vaulttest.New(f)
	h := agent.New(agent.Vault(v), agent.Options{MaxLine: maxLine})
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
		want := requestLines(in)
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

// requestLines counts the requests Serve sees in in: every line, blank ones
// too, and a last one without "\n".
func requestLines(in []byte) int {
	n := bytes.Count(in, []byte("\n"))
	if len(in) > 0 && in[len(in)-1] != '\n' {
		n++
	}
	return n
}
