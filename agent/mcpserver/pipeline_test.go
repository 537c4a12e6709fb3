package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault/vaulttest"
)

// pipelineRounds is how many files a pipelining client works on, six
// commands each, every answer depending on the command before it.
const pipelineRounds = 12

// pipelineScript is the commands a pipelining client sends, and the answer
// each must get when they run in the order they were sent.
func pipelineScript() (cmds []map[string]any, want []string) {
	for i := range pipelineRounds {
		p := fmt.Sprintf("/memories/p%d.md", i)
		cmds = append(cmds,
			map[string]any{"command": "create", "path": p, "file_text": "one"},
			map[string]any{"command": "view", "path": p},
			map[string]any{"command": "str_replace", "path": p, "old_str": "one", "new_str": "two"},
			map[string]any{"command": "view", "path": p},
			map[string]any{"command": "delete", "path": p},
			map[string]any{"command": "view", "path": p},
		)
		want = append(want,
			"File created successfully at: "+p,
			"Here's the content of "+p+" with line numbers:\n     1\tone",
			"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\ttwo",
			"Here's the content of "+p+" with line numbers:\n     1\ttwo",
			"Successfully deleted "+p,
			"Error: The path "+p+" does not exist. Please provide a valid path.",
		)
	}
	return cmds, want
}

// checkPipeline reports every answer that is not the one the command gets
// when the commands run in the order they were sent.
func checkPipeline(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	wrong := 0
	for i := range want {
		if got[i] != want[i] {
			wrong++
			if wrong <= 3 {
				t.Errorf("request %d answered %q, want %q", i, got[i], want[i])
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d answers wrong: the requests did not run in the order they were sent", wrong, len(want))
	}
}

// spinUntil waits, without sleeping, until t: a sleep cannot wait a fraction
// of a millisecond.
func spinUntil(t time.Time) {
	for time.Now().Before(t) {
	}
}

// TestMCPHTTPPipelinedGoClient sends memory commands through one Go SDK
// client from as many goroutines, as a Go program that runs one turn's tool
// calls at once does: each request goes on a connection of its own. Each
// call starts 0.2 ms after the one before it went out, so they are sent in
// order (goroutines started together reach the wire in any order). Every
// command must see what the one before it did, in both protocol revisions.
// A request used to take its place in the client's line only once its body
// was read, so 7 to 17 of 40 answers came out of another order.
func TestMCPHTTPPipelinedGoClient(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			url := serveStore(t, vaulttest.New(t), mcpserver.Options{Poll: -1}, mcpserver.HTTPOptions{NoAuth: true})
			sent := make(chan struct{}, 1)
			hc := &http.Client{Transport: wroteCalls{sent}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "pipeline-go", Version: "v1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1},
					&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			cmds, want := pipelineScript()
			got := make([]string, len(cmds))
			var wg sync.WaitGroup
			for i, c := range cmds {
				wg.Go(func() {
					args, _ := json.Marshal(c)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory", Arguments: json.RawMessage(args)})
					if err != nil {
						got[i] = "call failed: " + err.Error()
						return
					}
					got[i] = resultText(t, res)
				})
				select {
				case <-sent:
				case <-time.After(10 * time.Second):
					t.Fatalf("call %d not sent within 10s", i)
				}
				spinUntil(time.Now().Add(200 * time.Microsecond))
			}
			wg.Wait()
			checkPipeline(t, got, want)
		})
	}
}

// wroteCalls is an HTTP transport that tells sent each time a tools/call
// request has been written to its connection.
type wroteCalls struct{ sent chan<- struct{} }

func (w wroteCalls) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"tools/call"`)) {
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { w.sent <- struct{}{} },
		}))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPHTTPPipelinedTypeScriptClients runs testdata/pipeline.mjs, which
// sends memory commands through the TypeScript SDK (v1, and v2 in both
// protocol revisions) without awaiting each, 0.2 ms apart, as a caller that
// collects a turn's calls with Promise.all does; each request goes on a
// connection of its own. Every command must see what the one before it did.
// With the SDKs 10 to 52 of 72 answers used to be wrong, and under 2026-07-28
// they came nearly in reverse.
func TestMCPHTTPPipelinedTypeScriptClients(t *testing.T) {
	js := installNodePackages(t, tsClientPackage, tsSDKPackage)
	script, err := os.ReadFile(filepath.Join("testdata", "pipeline.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(js, "pipeline.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmds, want := pipelineScript()
	cmdsJSON, _ := json.Marshal(cmds)
	for _, c := range []struct{ sdk, era string }{{"v1", "legacy"}, {"v2", "legacy"}, {"v2", "modern"}} {
		t.Run(c.sdk+"-"+c.era, func(t *testing.T) {
			url := serveStore(t, vaulttest.New(t), mcpserver.Options{Poll: -1}, mcpserver.HTTPOptions{NoAuth: true})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr strings.Builder
			node := exec.CommandContext(ctx, "node", filepath.Join(js, "pipeline.mjs"), c.sdk, c.era, url, string(cmdsJSON))
			node.Stderr = &stderr
			out, err := node.Output()
			if err != nil {
				t.Fatalf("pipeline.mjs: %v\n%s", err, stderr.String())
			}
			var answers [][]any
			if err := json.Unmarshal(out, &answers); err != nil {
				t.Fatalf("pipeline.mjs printed %q: %v", out, err)
			}
			got := make([]string, len(answers))
			for i, a := range answers {
				got[i], _ = a[0].(string)
				if isErr, _ := a[1].(bool); isErr && !strings.HasPrefix(got[i], "Error: ") {
					got[i] = "failed: " + got[i]
				}
			}
			checkPipeline(t, got, want)
		})
	}
}

// tsSDKPackage is the TypeScript SDK that speaks the 2025 revisions, which
// Claude Code and most TypeScript clients are built on.
const tsSDKPackage = "@modelcontextprotocol/sdk@1.32.2"

// installNodePackages installs the npm packages into a folder of the test's
// and returns it, or skips the test (fails it under CI) when node or npm is
// missing or the install fails.
func installNodePackages(t *testing.T, pkgs ...string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipUnlessCI(t, "%s is not installed (apt-get install nodejs npm)", tool)
		}
	}
	js := t.TempDir()
	install := exec.Command("npm", append([]string{"install", "--prefer-offline", "--no-audit", "--no-fund", "--no-save", "--prefix", js}, pkgs...)...)
	install.Dir = js
	if out, err := install.CombinedOutput(); err != nil {
		skipUnlessCI(t, "npm cannot install %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return js
}
