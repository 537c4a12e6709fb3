package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// modernMeta is the _meta every request of the 2026-07-28 revision carries in
// place of an initialize handshake.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"pipeliner","version":"1"}}`

// answers maps each answer's id to its first text content (or error message)
// in the order the answers came.
func answers(t *testing.T, out []byte) (ids []string, text map[string]string) {
	t.Helper()
	text = map[string]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m struct {
			ID     json.RawMessage
			Method string
			Result struct {
				Content []struct{ Text string }
			}
			Error *struct{ Message string }
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("answer line %q: %v", line, err)
		}
		if m.Method != "" || m.ID == nil {
			continue // a notification
		}
		id := string(m.ID)
		ids = append(ids, id)
		switch {
		case m.Error != nil:
			text[id] = "error: " + m.Error.Message
		case len(m.Result.Content) > 0:
			text[id] = m.Result.Content[0].Text
		default:
			text[id] = ""
		}
	}
	return ids, text
}

// TestMCPStdioPipelinedInOrder sends a create and a view of the same file back
// to back, without waiting, many times over, as a client that pipelines does.
// The SDK runs calls concurrently, so the view used to be answered first, with
// "does not exist", nearly every time. Each view must see the create before it,
// and the answers come in the order the requests did.
func TestMCPStdioPipelinedInOrder(t *testing.T) {
	const rounds = 25
	for _, era := range []struct {
		name, start, meta string
	}{
		{"2025-11-25", `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeliner","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`, ""},
		{"2026-07-28", "", "," + modernMeta},
	} {
		t.Run(era.name, func(t *testing.T) {
			v := vaulttest.New(t)
			var in strings.Builder
			in.WriteString(era.start)
			var want []string
			for i := range rounds {
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/f%d.md","file_text":"text %d"}%s}}`+"\n", i, i, i, era.meta)
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"v%d","method":"tools/call","params":{"name":"memory","arguments":{"command":"view","path":"/memories/f%d.md"}%s}}`+"\n", i, i, era.meta)
				want = append(want, fmt.Sprintf(`"c%d"`, i), fmt.Sprintf(`"v%d"`, i))
			}
			var out bytes.Buffer
			if err := mcpserver.ServeStdio(context.Background(), mcpserver.New(v, mcpserver.Options{Poll: -1}).Server, strings.NewReader(in.String()), &out, 0); err != nil {
				t.Fatalf("ServeStdio = %v", err)
			}
			ids, text := answers(t, out.Bytes())
			if era.start != "" {
				ids = ids[1:] // initialize's answer
			}
			if strings.Join(ids, " ") != strings.Join(want, " ") {
				t.Errorf("answers came in the order\n%v\nwant\n%v", ids, want)
			}
			late := 0
			for i := range rounds {
				id := fmt.Sprintf(`"v%d"`, i)
				if w := fmt.Sprintf("Here's the content of /memories/f%d.md with line numbers:\n     1\ttext %d", i, i); text[id] != w {
					late++
					if late <= 3 {
						t.Errorf("view %d answered %q, want the file the create before it made", i, text[id])
					}
				}
			}
			if late > 0 {
				t.Errorf("%d of %d views did not see the create sent before them", late, rounds)
			}
		})
	}
}

// TestMCPStdioEndsWithListenOpen: the end of input ends the server even while
// a subscriptions/listen (which has no answer until it ends) is open. It used
// to wait for that answer for good.
func TestMCPStdioEndsWithListenOpen(t *testing.T) {
	v := vaulttest.New(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["memory:///memories/a.md"]},` + modernMeta + `}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/a.md","file_text":"a"},` + modernMeta + `}}
`
	inR, inW := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeStdio(context.Background(), mcpserver.New(v, mcpserver.Options{Poll: -1}).Server, inR, &out, 0)
	}()
	if _, err := io.WriteString(inW, in); err != nil {
		t.Fatal(err)
	}
	// The listen is open: its acknowledgement came.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "notifications/subscriptions/acknowledged") || !strings.Contains(out.String(), `"id":2`) {
		if time.Now().After(deadline) {
			t.Fatalf("no acknowledgement of the listen and answer to the create within 10s:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil at the end of input", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("ServeStdio still running 10s after the end of input, with a listen open:\n%s", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
