package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// serveStore serves store over streamable HTTP on loopback, as memvault mcp
// --http does, and returns the URL.
func serveStore(t *testing.T, store mcpserver.Store, sopts mcpserver.Options, hopts mcpserver.HTTPOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := mcpserver.Listen(ctx, "127.0.0.1:0", hopts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	done := make(chan error, 1)
	srv := mcpserver.New(store, sopts)
	go func() { done <- mcpserver.ServeHTTP(ctx, srv.Server, ln, hopts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP = %v", err)
		}
		srv.Close()
	})
	return "http://" + ln.Addr().String() + mcpserver.Path
}

// TestMCPHTTPModernGoClient: the Go SDK's client, which asks for the
// 2026-07-28 revision first, gets it over HTTP (it used to be refused, and
// fall back to 2025-11-25): tools, the memory tool, a resource update and a
// list change for a commit made by another process, through
// subscriptions/listen. The requests of one client share one session in the
// history although the revision has no sessions; another client has its own.
func TestMCPHTTPModernGoClient(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _ := vaulttest.NewAt(t, dir)
	url := serveStore(t, v, mcpserver.Options{Poll: time.Hour}, mcpserver.HTTPOptions{NoAuth: true})

	updated := make(chan string, 16)
	listChanged := make(chan struct{}, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "modern-go", Version: "v1"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated protocol %s, want 2026-07-28", got)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "memory") || !slices.Contains(names, "history") {
		t.Errorf("tools %v, want memory and history among them", names)
	}
	const uri = "memory:///memories/todo.md"
	if got, isErr := callMemory(t, cs, `{"command":"create","path":"/memories/todo.md","file_text":"- one"}`, "toolu_modern"); isErr || got != "File created successfully at: /memories/todo.md" {
		t.Errorf("create = %q, %v", got, isErr)
	}
	if got, _ := callMemory(t, cs, `{"command":"view","path":"/memories/todo.md"}`, ""); got != "Here's the content of /memories/todo.md with line numbers:\n     1\t- one" {
		t.Errorf("view = %q", got)
	}
	callMemory(t, cs, `{"command":"create","path":"/memories/b.md","file_text":"b"}`, "")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("Subscribe(%s): %v", uri, err)
	}
	drain(listChanged)

	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPWatchWriterProcess$")
	cmd.Env = append(os.Environ(), watchHelperEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	if got := waitFor(t, updated, "resources/updated after another process's commit"); got != uri {
		t.Errorf("resources/updated for %s, want %s", got, uri)
	}
	waitFor(t, listChanged, "resources/list_changed after another process's create")
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || rr.Contents[0].Text != "- uno" {
		t.Errorf("ReadResource after the change = %+v, %v; want the new content", rr, err)
	}

	other, err := mcp.NewClient(&mcp.Implementation{Name: "other-go", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer other.Close()
	callMemory(t, other, `{"command":"create","path":"/memories/c.md","file_text":"c"}`, "")

	recs, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]string{} // path -> session
	for _, r := range recs {
		sessions[r.Path] = r.Session
		if r.Path == "/memories/todo.md" && r.Command == "create" && (r.Agent != "modern-go" || r.ToolUseID != "toolu_modern") {
			t.Errorf("create commit: Agent %q, Tool-Use-Id %q; want modern-go, toolu_modern", r.Agent, r.ToolUseID)
		}
	}
	if s := sessions["/memories/b.md"]; !strings.HasPrefix(s, "mcp-") {
		t.Errorf("Session %q, want an mcp- session", s)
	}
	if a, b := sessions["/memories/b.md"], sessions["/memories/c.md"]; a == b {
		t.Errorf("two clients share the session %q", a)
	}
	for _, r := range recs {
		if r.Agent == "modern-go" && r.Session != sessions["/memories/b.md"] {
			t.Errorf("commit %s %s: Session %q, want the client's one session %q", r.Command, r.Path, r.Session, sessions["/memories/b.md"])
		}
	}
}

// gatedVault holds each create in its commit until the test lets it go, and
// says when one is held: a request is then surely in the server, so the next
// one the test sends arrived after it.
type gatedVault struct {
	*vault.Vault
	held    chan struct{}
	release chan struct{}
}

func (g *gatedVault) Update(ctx context.Context, meta vault.Meta, fn func(*vault.Tx) error) error {
	if meta.Command == "create" {
		g.held <- struct{}{}
		<-g.release
	}
	return g.Vault.Update(ctx, meta, fn)
}

// rawClient speaks JSON-RPC over HTTP as a client of either revision does.
type rawClient struct {
	t       *testing.T
	url     string
	modern  bool   // 2026-07-28: _meta and headers on every request, no session
	session string // Mcp-Session-Id of a 2025-11-25 session
	n       atomic.Int64
}

// call posts one request and returns its answer's result, or the error.
func (c *rawClient) call(method, params, name string) (json.RawMessage, error) {
	id := c.n.Add(1)
	if c.modern {
		params = strings.TrimSuffix(params, "}")
		if params != "{" {
			params += ","
		}
		params += modernMeta + "}"
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.modern {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else if c.session != "" {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if s := res.Header.Get("Mcp-Session-Id"); s != "" && c.session == "" && !c.modern {
		c.session = s
	}
	if res.StatusCode/100 != 2 {
		b, _ := io.ReadAll(res.Body)
		return nil, fmt.Errorf("%s %s: %s: %s", method, params, res.Status, b)
	}
	// The answer is the body (JSON) or one of its events (SSE).
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		if json.Unmarshal([]byte(line), &m) != nil || string(m.ID) != fmt.Sprint(id) {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	}
	return nil, fmt.Errorf("%s: no answer: %v", method, sc.Err())
}

// memory runs one memory command and returns its text.
func (c *rawClient) memory(input string) (string, error) {
	res, err := c.call("tools/call", `{"name":"memory","arguments":`+input+`}`, "memory")
	if err != nil {
		return "", err
	}
	var r struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
		return "", fmt.Errorf("tools/call answer %s: %v", res, err)
	}
	return r.Content[0].Text, nil
}

// TestMCPHTTPPipelinedInOrder: a create, and a view of the same file sent while
// the create is still running, on both revisions. The view must see the file:
// a client's requests are answered as if run in the order they arrived. The
// SDK alone runs them at once, and the view said "does not exist".
func TestMCPHTTPPipelinedInOrder(t *testing.T) {
	const rounds = 8
	for _, modern := range []bool{false, true} {
		name := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		t.Run(name, func(t *testing.T) {
			g := &gatedVault{Vault: vaulttest.New(t), held: make(chan struct{}), release: make(chan struct{})}
			c := &rawClient{t: t, url: serveStore(t, g, mcpserver.Options{Poll: -1}, mcpserver.HTTPOptions{NoAuth: true}), modern: modern}
			if !modern {
				if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeliner","version":"1"}}`, ""); err != nil {
					t.Fatal(err)
				}
				postNotification(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			late := 0
			for i := range rounds {
				type answer struct {
					text string
					err  error
				}
				created, viewed := make(chan answer, 1), make(chan answer, 1)
				go func() {
					s, err := c.memory(fmt.Sprintf(`{"command":"create","path":"/memories/f%d.md","file_text":"text %d"}`, i, i))
					created <- answer{s, err}
				}()
				select {
				case <-g.held:
				case a := <-created:
					t.Fatalf("create %d answered %q, %v before it committed", i, a.text, a.err)
				}
				go func() {
					s, err := c.memory(fmt.Sprintf(`{"command":"view","path":"/memories/f%d.md"}`, i))
					viewed <- answer{s, err}
				}()
				time.Sleep(30 * time.Millisecond) // the view's time to overtake, if it can
				g.release <- struct{}{}
				if a := <-created; a.err != nil || a.text != fmt.Sprintf("File created successfully at: /memories/f%d.md", i) {
					t.Fatalf("create %d = %q, %v", i, a.text, a.err)
				}
				a := <-viewed
				if want := fmt.Sprintf("Here's the content of /memories/f%d.md with line numbers:\n     1\ttext %d", i, i); a.err != nil || a.text != want {
					late++
					if late <= 2 {
						t.Errorf("view %d = %q, %v; want the file the create before it made", i, a.text, a.err)
					}
				}
			}
			if late > 0 {
				t.Errorf("%d of %d views did not see the create sent before them", late, rounds)
			}
		})
	}
}

func postNotification(t *testing.T, c *rawClient, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %s", body, res.Status)
	}
}

// TestMCPHTTPModernRaw: a client that follows the 2026-07-28 revision by the
// letter, with nothing of the SDK's: discovery names the revision beside the
// older ones, and every list and read is for this client alone (cacheScope
// private), memory being private.
func TestMCPHTTPModernRaw(t *testing.T) {
	v := vaulttest.New(t)
	c := &rawClient{t: t, url: serveStore(t, v, mcpserver.Options{Poll: -1}, mcpserver.HTTPOptions{NoAuth: true}), modern: true}
	res, err := c.call("server/discover", `{}`, "")
	if err != nil {
		t.Fatal(err)
	}
	var disc struct{ SupportedVersions []string }
	if err := json.Unmarshal(res, &disc); err != nil || !slices.Contains(disc.SupportedVersions, "2026-07-28") || !slices.Contains(disc.SupportedVersions, "2025-11-25") {
		t.Errorf("server/discover = %s, want 2026-07-28 and 2025-11-25 among the versions", res)
	}
	if got, err := c.memory(`{"command":"create","path":"/memories/a.md","file_text":"secret"}`); err != nil || got != "File created successfully at: /memories/a.md" {
		t.Fatalf("create = %q, %v", got, err)
	}
	for _, m := range []struct{ method, params, name string }{
		{"tools/list", `{}`, ""},
		{"resources/list", `{}`, ""},
		{"resources/templates/list", `{}`, ""},
		{"resources/read", `{"uri":"memory:///memories/a.md"}`, "memory:///memories/a.md"},
	} {
		res, err := c.call(m.method, m.params, m.name)
		if err != nil {
			t.Errorf("%s: %v", m.method, err)
			continue
		}
		var r struct{ CacheScope string }
		if err := json.Unmarshal(res, &r); err != nil || r.CacheScope != "private" {
			t.Errorf("%s: cacheScope %q, want private: %s", m.method, r.CacheScope, bytes.TrimSpace(res))
		}
	}
}
