package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestServe(t *testing.T) {
	v := vaulttest.New(t)
	h := agent.New(agent.Vault(v), agent.Options{MaxLine: 200})
	in := strings.Join([]string{
		`{"id":1,"input":{"command":"create","path":"/memories/a.md","file_text":"<b>&</b>"},"tool_use_id":"toolu_1"}`,
		`{"id":"two","input":{"command":"view","path":"/memories/a.md"}}`,
		``,
		`   `,
		`{"id": {"nested" : [1, 2.50]},"input":{"command":"view","path":"/etc"}}`,
		`{"id":null,"input":{"command":"delete","path":"/memories/a.md"}}`,
		`{"input":{"command":"view","path":"/memories/a.md"}}`,
		`not json`,
		`[1,2]`,
		`null`,
		`{"id":7}`,
		`{"id":8,"input":{"command":"view","path":"/memories"},"tool_use_id":5}`,
		`{"id":9,"input":"view"}`,
		`{"id":10,"input":{"command":"create","path":"/memories/` + strings.Repeat("x", 200) + `","file_text":""}}`,
		// Over-long lines too, each answered with its id when the line begins with it.
		` { "id" : [1, "a"] , "input":{"command":"create","path":"/memories/y","file_text":"` + strings.Repeat("y", 200) + `"}}`,
		`{"input":{"command":"create","path":"/memories/y","file_text":"` + strings.Repeat("y", 200) + `"},"id":13}`,
		`{"id":` + strings.Repeat("1", 5000) + `,"input":{}}`, // an id longer than the part of the line kept
		`{"id":11,"input":{"command":"view","path":"/memories"}}` + "\r",
		`{"id":12,"input":{"command":"view","path":"/memories"}}`, // no final newline
	}, "\n")
	var out strings.Builder
	if err := agent.Serve(context.Background(), h, strings.NewReader(in), &out); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	const tooLong = "Error: Invalid request: line longer than 200 bytes, so nothing was run. " +
		"Send a shorter request (less file_text at once), or raise the limit the program serving memory sets (agent.Options.MaxLine)"
	root := `Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories`
	want := []string{
		`{"id":1,"content":"File created successfully at: /memories/a.md","is_error":false}`,
		`{"id":"two","content":"Here's the content of /memories/a.md with line numbers:\n     1\t<b>&</b>","is_error":false}`,
		// Blank lines are answered too: a bridge that counts lines waits for one.
		`{"id":null,"content":"Error: Invalid request: a blank line, so nothing was run. Send one request, a JSON object, on each line","is_error":true}`,
		`{"id":null,"content":"Error: Invalid request: a blank line, so nothing was run. Send one request, a JSON object, on each line","is_error":true}`,
		`{"id":{"nested" : [1, 2.50]},"content":"Error: Path must start with /memories, got: /etc","is_error":true}`,
		`{"id":null,"content":"Successfully deleted /memories/a.md","is_error":false}`,
		`{"id":null,"content":"Error: The path /memories/a.md does not exist. Please provide a valid path.","is_error":true}`,
		`{"id":null,"content":"Error: Invalid request: not a JSON object","is_error":true}`,
		`{"id":null,"content":"Error: Invalid request: not a JSON object","is_error":true}`,
		`{"id":null,"content":"Error: Invalid request: not a JSON object","is_error":true}`,
		`{"id":7,"content":"Error: Invalid request: no input","is_error":true}`,
		`{"id":8,"content":"Error: Invalid request: tool_use_id is not a string","is_error":true}`,
		`{"id":9,"content":"Error: Invalid tool input: expected a JSON object, got a string","is_error":true}`,
		`{"id":10,"content":"` + tooLong + `","is_error":true}`,
		`{"id":[1, "a"],"content":"` + tooLong + `","is_error":true}`,
		`{"id":null,"content":"` + tooLong + `","is_error":true}`,
		`{"id":null,"content":"` + tooLong + `","is_error":true}`,
		`{"id":11,"content":"` + root + `","is_error":false}`,
		`{"id":12,"content":"` + root + `","is_error":false}`,
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("answer line %d = %s\nwant %s", i+1, g, w)
		}
		if g != "" && !json.Valid([]byte(g)) {
			t.Errorf("answer line %d is not JSON: %s", i+1, g)
		}
	}
	recs, err := v.Log(context.Background(), vault.LogOptions{Limit: 2})
	if err != nil || len(recs) != 2 || recs[0].Command != "delete" || recs[1].Command != "create" || recs[1].ToolUseID != "toolu_1" {
		t.Errorf("Log = %+v, %v; want create (tool use toolu_1) then delete", recs, err)
	}
}

func TestServeEmpty(t *testing.T) {
	var out strings.Builder
	h := agent.New(agent.Vault(vaulttest.New(t)), agent.Options{})
	if err := agent.Serve(context.Background(), h, strings.NewReader(""), &out); err != nil || out.Len() != 0 {
		t.Errorf("Serve(empty) = %v, wrote %q; want nil, nothing", err, out.String())
	}
}

func TestServeCancel(t *testing.T) {
	h := agent.New(agent.Vault(vaulttest.New(t)), agent.Options{})
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	var out strings.Builder
	go func() { done <- agent.Serve(ctx, h, r, &out) }()
	if _, err := io.WriteString(w, `{"id":1,"input":{"command":"view","path":"/memories"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop after cancel")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServeWriteError(t *testing.T) {
	h := agent.New(agent.Vault(vaulttest.New(t)), agent.Options{})
	err := agent.Serve(context.Background(), h, strings.NewReader(`{"input":{}}`+"\n"), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("Serve to a broken writer = %v, want the write error", err)
	}
}
