package main

import (
	"bufio"
	"context"
	"encoding/json"
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

func TestMCPStreamableHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, memvaultExe(t), append(initVault(t), "mcp", "--http", "127.0.0.1:0")...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	// The URL printed, as the README's, ends in /mcp: clients such as the MCP
	// Inspector take a URL without it for the old SSE transport.
	line, err := bufio.NewReader(stderr).ReadString('\n')
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp$`).FindString(strings.TrimSuffix(line, "\n"))
	if err != nil || url == "" {
		t.Fatalf("memvault mcp --http said %q, %v; want its address, ending in /mcp", line, err)
	}
	// The root, which the README once gave, still answers.
	root, err := mcp.NewClient(&mcp.Implementation{Name: "root", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: strings.TrimSuffix(url, "mcp")}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", strings.TrimSuffix(url, "mcp"), err)
	}
	root.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "story", Version: "v1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	defer cs.Close()
	storyThrough(t, cs)
}
