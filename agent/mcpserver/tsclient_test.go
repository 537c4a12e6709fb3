package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// tsClientPackage is the TypeScript SDK's v2 client, the first to speak the
// 2026-07-28 revision.
const tsClientPackage = "@modelcontextprotocol/client@2.4.0"

// skipUnlessCI skips tb for what is missing on this machine (node, npm, a
// package install), but fails it where CI is set: there they are installed on
// purpose, and a client that did not run is a failure.
func skipUnlessCI(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		tb.Fatalf("CI=%s, where this must run: "+format, append([]any{ci}, args...)...)
	}
	tb.Skipf("skipped: "+format, args...)
}

// TestMCPHTTPTypeScriptV2Client runs testdata/tsclient.mjs, the TypeScript
// SDK's v2 client pinned to 2026-07-28, against the server over HTTP: tools,
// the memory tool, and a resources/updated through subscriptions/listen for a
// change another process commits. Pinned clients used to get -32022, protocol
// version not supported.
func TestMCPHTTPTypeScriptV2Client(t *testing.T) {
	js := installNodePackages(t, tsClientPackage)
	script, err := os.ReadFile(filepath.Join("testdata", "tsclient.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(js, "tsclient.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	v, _ := vaulttest.NewAt(t, dir)
	url := serveStore(t, v, mcpserver.Options{Poll: time.Hour}, mcpserver.HTTPOptions{NoAuth: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", filepath.Join(js, "tsclient.mjs"), url)
	var stderr strings.Builder
	node.Stderr = &stderr
	stdout, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{"protocol", "2026-07-28"},
		{"tools", []any{"blame", "history", "memory", "search"}},
		{"create", "File created successfully at: /memories/todo.md", false},
		{"view", "Here's the content of /memories/todo.md with line numbers:\n     1\t- one", false},
		{"listening", []any{"memory:///memories/todo.md"}},
		{"updated", "memory:///memories/todo.md"},
		{"read", "- uno", "private"},
	}
	sc := bufio.NewScanner(stdout)
	step := 0
	for sc.Scan() {
		var got []any
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("tsclient.mjs printed %q: %v", sc.Text(), err)
		}
		if step >= len(want) {
			t.Fatalf("tsclient.mjs printed %s after the last step", sc.Text())
		}
		w, _ := json.Marshal(want[step])
		if g, _ := json.Marshal(got); string(g) != string(w) {
			t.Errorf("step %d: tsclient.mjs printed %s, want %s", step, g, w)
		}
		if got[0] == "listening" {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMCPWatchWriterProcess$")
			cmd.Env = append(os.Environ(), watchHelperEnv+"="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("writer process: %v\n%s", err, out)
			}
		}
		step++
	}
	if err := node.Wait(); err != nil || step != len(want) {
		t.Fatalf("tsclient.mjs: %v after %d of %d steps\n%s", err, step, len(want), stderr.String())
	}
	recs, err := v.Log(context.Background(), vault.LogOptions{Path: "/memories/todo.md"})
	if err != nil || len(recs) != 2 || recs[1].Agent != "ts-v2" || !strings.HasPrefix(recs[1].Session, "mcp-") {
		t.Errorf("history of todo.md = %+v, %v; want the create by ts-v2 in an mcp- session, then the other process's edit", recs, err)
	}
}
