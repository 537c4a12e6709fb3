package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpStory is a spec scenario: every command, its usual errors, in order.
var mcpStory = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"create","path":"/memories/notes/todo.md","file_text":"- one\n- two\n"}`,
	`{"command":"create","path":"/memories/notes/todo.md","file_text":"again"}`,
	`{"command":"str_replace","path":"/memories/notes/todo.md","old_str":"two","new_str":"deux"}`,
	`{"command":"str_replace","path":"/memories/notes/todo.md","old_str":"- ","new_str":"* "}`,
	`{"command":"insert","path":"/memories/notes/todo.md","insert_line":0,"insert_text":"# Todo\n"}`,
	`{"command":"insert","path":"/memories/notes/todo.md","insert_line":99,"insert_text":"x"}`,
	`{"command":"view","path":"/memories/notes/todo.md","view_range":[2,-1]}`,
	`{"command":"rename","old_path":"/memories/notes","new_path":"/memories/archive/notes"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/../etc"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"frobnicate"}`,
}

// memvaultExe links the test binary as memvault, which TestMain runs as main.
func memvaultExe(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "memvault")
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	return exe
}

// storyThrough runs mcpStory through the memvault mcp process at the other end
// of transport and, on a second vault, through `memvault tool`; the answers
// must be the same.
func storyThrough(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("ListTools = %v, %v; want memory, history, search and blame", tools, err)
	}
	dir := t.TempDir()
	cli := cliFor("--vault", filepath.Join(dir, "vault.git"), "--identity", filepath.Join(dir, "identity"))
	if _, code, stderr := cli("", "init"); code != exitOK {
		t.Fatalf("memvault init: %s", stderr)
	}
	for _, input := range mcpStory {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory", Arguments: json.RawMessage(input)})
		if err != nil {
			t.Fatalf("CallTool(%s) = %v", input, err)
		}
		got := res.Content[0].(*mcp.TextContent).Text
		want, code, _ := cli(input, "tool")
		if got != want || res.IsError != (code == exitAnswer) {
			t.Errorf("CallTool(%s) = %q, isError %v\nmemvault tool: %q, status %d", input, got, res.IsError, want, code)
		}
	}
}

func initVault(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	flags := []string{"--vault", filepath.Join(dir, "vault.git"), "--identity", filepath.Join(dir, "identity")}
	if _, code, stderr := cliFor(flags...)("", "init"); code != exitOK {
		t.Fatalf("memvault init: %s", stderr)
	}
	return flags
}

// TestMCPStdio starts memvault as Claude Desktop does with the configuration the
// README shows (testdata/claude_desktop_config.json), the vault named by the
// environment, and talks to it with the SDK's CommandTransport.
func TestMCPStdio(t *testing.T) {
	var config struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "claude_desktop_config.json"))
	if err == nil {
		err = json.Unmarshal(b, &config)
	}
	server, ok := config.MCPServers["memvault"]
	if err != nil || !ok || server.Command != "memvault" {
		t.Fatalf("testdata/claude_desktop_config.json: %v, %+v", err, config)
	}
	flags := initVault(t) // --vault DIR --identity FILE
	cmd := exec.Command(memvaultExe(t), server.Args...)
	cmd.Env = append(os.Environ(), envVault+"="+flags[1], envIdentity+"="+flags[3])
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "v1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to memvault mcp: %v", err)
	}
	defer cs.Close()
	// The serverInfo version is the one --version prints.
	v, err := exec.Command(memvaultExe(t), "--version").Output()
	if err != nil {
		t.Fatalf("memvault --version: %v", err)
	}
	if got, want := cs.InitializeResult().ServerInfo.Version, strings.TrimPrefix(strings.TrimSpace(string(v)), "memvault version "); got != want || got == "" {
		t.Errorf("serverInfo version %q, --version says %q", got, want)
	}
	storyThrough(t, cs)
}

// startMCPHTTP starts `memvault mcp --http 127.0.0.1:0 extra...` with its
// own config folder (and no token in the environment), and returns the URL
// it prints and a reader of the rest of its stderr.
func startMCPHTTP(t *testing.T, ctx context.Context, config string, extra ...string) (url string, said *bufio.Reader) {
	t.Helper()
	cmd := exec.CommandContext(ctx, memvaultExe(t), append(append(initVault(t), "mcp", "--http", "127.0.0.1:0"), extra...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, envMCPToken+"=")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The URL printed, as the README's, ends in /mcp: clients such as the MCP
	// Inspector take a URL without it for the old SSE transport.
	said = bufio.NewReader(stderr)
	t.Cleanup(func() {
		// Everything it says to the end is read: a server whose stderr
		// pipe fills stops in its write (a race report at exit did, and the
		// test waited for it for good). An interrupted server ends cleanly,
		// within seconds.
		cmd.Process.Signal(os.Interrupt)
		kill := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
		rest, _ := io.ReadAll(said)
		kill.Stop()
		cmd.Wait() // ctx's error when the test's context ended first
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("memvault mcp --http, interrupted, exited with status %d; it said:\n%s", code, rest)
		}
	})
	line, err := said.ReadString('\n')
	url = regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp$`).FindString(strings.TrimSuffix(line, "\n"))
	if err != nil || url == "" {
		t.Fatalf("memvault mcp --http said %q, %v; want its address, ending in /mcp", line, err)
	}
	return url, said
}

// bearerTransport adds an Authorization header to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPStreamableHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	config := t.TempDir()
	url, said := startMCPHTTP(t, ctx, config)
	// The token is made on first use, in a file only the user can read, and
	// stderr says how to give it to Claude Code.
	file := filepath.Join(config, "memvault", "mcp-token")
	line, _ := said.ReadString('\n')
	add, _ := said.ReadString('\n')
	if !strings.Contains(line, file) || !strings.Contains(add, "claude mcp add --transport http memvault "+url+` --header "Authorization: Bearer $(cat `+file+`)"`) {
		t.Errorf("memvault mcp --http said %q %q; want the token file %s and the claude mcp add line", line, add, file)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, %v; want mode 0600", file, fi, err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: bearerTransport{strings.TrimSpace(string(b))}}

	// The root, which the README once gave, still answers.
	root, err := mcp.NewClient(&mcp.Implementation{Name: "root", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: strings.TrimSuffix(url, "mcp"), HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", strings.TrimSuffix(url, "mcp"), err)
	}
	root.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "story", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	defer cs.Close()
	storyThrough(t, cs)
}

// TestMCPHTTPLoopbackToken: every account on the machine can connect to
// loopback, and a server that asked no token there let another user read and
// write the memory. A client without the token is refused; --no-auth serves
// without one and warns.
func TestMCPHTTPLoopbackToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, _ := startMCPHTTP(t, ctx, t.TempDir())
	for _, auth := range []string{"", "Bearer ", "Bearer guess"} {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other-user","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("initialize on loopback with Authorization %q: %s, want 401", auth, res.Status)
		}
	}

	url, said := startMCPHTTP(t, ctx, t.TempDir(), "--no-auth")
	if line, _ := said.ReadString('\n'); !strings.Contains(line, "warning: --no-auth") {
		t.Errorf("memvault mcp --http --no-auth said %q, want a warning", line)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "no-auth", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect to %s with --no-auth: %v", url, err)
	}
	cs.Close()
}

// TestMCPHTTPRefusedMakesNoToken: an address the server refuses (not loopback,
// no --allow-remote) is refused before the token file is made; a file nobody
// needs was left behind before.
func TestMCPHTTPRefusedMakesNoToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	config := t.TempDir()
	cmd := exec.CommandContext(ctx, memvaultExe(t), append(initVault(t), "mcp", "--http", "0.0.0.0:0")...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config, envMCPToken+"=")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitSetup || !strings.Contains(string(out), "--allow-remote") {
		t.Fatalf("mcp --http 0.0.0.0:0 = %v, status %d\n%s\nwant status %d naming --allow-remote", err, code, out, exitSetup)
	}
	if _, err := os.Stat(filepath.Join(config, "memvault", "mcp-token")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused address left a token file: %v", err)
	}
}
