package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// emptyHome returns an environment whose home, data and config folders are
// an empty temporary folder, with no memvault variables: a machine that has
// never run memvault.
func emptyHome(t *testing.T) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" || strings.HasPrefix(name, "XDG_") || strings.HasPrefix(name, "MEMVAULT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home,
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config")), home
}

// connectMCP starts cmd as an MCP client host does and connects the SDK's client to it.
func connectMCP(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "v1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", strings.Join(cmd.Args, " "), err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callMemory runs one memory command through cs and returns its text and isError.
func callMemory(t *testing.T, cs *mcp.ClientSession, input string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory", Arguments: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("CallTool(memory, %s) = %v", input, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("CallTool(memory, %s) content %v, want one text", input, res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestMCPFirstUse connects the MCP SDK's client to memvault mcp on a machine
// that never ran memvault: the first view answers, and the vault and the
// identity are where init would have put them.
func TestMCPFirstUse(t *testing.T) {
	env, home := emptyHome(t)
	cmd := exec.Command(memvaultExe(t), "mcp")
	cmd.Env = env
	cs := connectMCP(t, cmd)
	got, isErr := callMemory(t, cs, `{"command":"view","path":"/memories"}`)
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"
	if got != want || isErr {
		t.Errorf("first view = %q, isError %v; want %q", got, isErr, want)
	}
	if got, isErr := callMemory(t, cs, `{"command":"create","path":"/memories/first.md","file_text":"remembered\n"}`); isErr {
		t.Errorf("create after the first view = %q, an error", got)
	}
	for _, p := range []string{".local/share/memvault/default.git/HEAD", ".config/memvault/identity"} {
		if _, err := os.Stat(filepath.Join(home, p)); err != nil {
			t.Errorf("after first use: %v", err)
		}
	}
}

// TestMCPProjectVaults starts memvault as Claude Code does for two projects,
// each configured with `claude mcp add --scope project memvault -- memvault mcp
// --vault NAME` (testdata/claude_project_mcp.json is the .mcp.json that writes
// for projA), on one machine and one identity: neither ever sees the other's
// files.
func TestMCPProjectVaults(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "claude_project_mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	env, home := emptyHome(t)
	sessions := map[string]*mcp.ClientSession{}
	for _, name := range []string{"projA", "projB"} {
		project := filepath.Join(home, "src", name)
		if err := os.MkdirAll(project, 0o700); err != nil {
			t.Fatal(err)
		}
		config := strings.ReplaceAll(string(b), `"projA"`, `"`+name+`"`)
		if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		var mcpJSON struct {
			MCPServers map[string]struct {
				Type    string            `json:"type"`
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(config), &mcpJSON); err != nil {
			t.Fatalf("%s/.mcp.json: %v", name, err)
		}
		server, ok := mcpJSON.MCPServers["memvault"]
		if !ok || server.Type != "stdio" || server.Command != "memvault" {
			t.Fatalf("%s/.mcp.json: %+v", name, mcpJSON)
		}
		cmd := exec.Command(memvaultExe(t), server.Args...)
		cmd.Dir, cmd.Env = project, env
		for k, v := range server.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		sessions[name] = connectMCP(t, cmd)
	}
	a, b2 := sessions["projA"], sessions["projB"]
	if got, isErr := callMemory(t, a, `{"command":"create","path":"/memories/a-secret.md","file_text":"only A\n"}`); isErr {
		t.Fatalf("create in projA = %q", got)
	}
	if got, isErr := callMemory(t, b2, `{"command":"create","path":"/memories/b-secret.md","file_text":"only B\n"}`); isErr {
		t.Fatalf("create in projB = %q", got)
	}
	for _, tc := range []struct {
		cs          *mcp.ClientSession
		own, others string
	}{{a, "a-secret.md", "b-secret.md"}, {b2, "b-secret.md", "a-secret.md"}} {
		got, _ := callMemory(t, tc.cs, `{"command":"view","path":"/memories"}`)
		if !strings.Contains(got, tc.own) || strings.Contains(got, tc.others) {
			t.Errorf("view /memories = %q; want %s and not %s", got, tc.own, tc.others)
		}
		if got, isErr := callMemory(t, tc.cs, `{"command":"view","path":"/memories/`+tc.others+`"}`); !isErr {
			t.Errorf("view of the other project's file = %q, want an error", got)
		}
	}
	for _, name := range []string{"projA", "projB"} {
		if _, err := os.Stat(filepath.Join(home, ".local/share/memvault", name+".git", "HEAD")); err != nil {
			t.Errorf("vault %s: %v", name, err)
		}
	}
}

// TestMCPDamagedVault: a client that cannot see the server's stderr still
// lists the tools, and every call answers with the reason and the fix.
func TestMCPDamagedVault(t *testing.T) {
	flags := initVault(t) // --vault DIR --identity FILE
	ref := filepath.Join(flags[1], "refs", "heads", "main")
	bad := strings.Repeat("5", 40) + "\n"
	if err := os.WriteFile(ref, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connectMCP(t, exec.Command(memvaultExe(t), append(flags, "mcp")...))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("ListTools = %v, %v; want memory, history, search and blame", tools, err)
	}
	got, isErr := callMemory(t, cs, `{"command":"view","path":"/memories"}`)
	for _, want := range []string{"could not start", "main branch is damaged", "memvault fsck --repair", flags[1]} {
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("view on a damaged vault = %q, isError %v; want an error naming %q", got, isErr, want)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "history", Arguments: map[string]any{}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != got {
		t.Errorf("history on a damaged vault = %+v, %v; want the same error", res, err)
	}
	if b, err := os.ReadFile(ref); err != nil || string(b) != bad {
		t.Errorf("main after the server ran: %q, %v; want it left as it was", b, err)
	}
}

// TestChatFirstUse: chat on a vault that does not exist yet creates it.
func TestChatFirstUse(t *testing.T) {
	chatServer(t,
		assistant("tool_use", `{"type":"tool_use","id":"toolu_f1","name":"memory","input":{"command":"view","path":"/memories"}}`),
		assistant("end_turn", `{"type":"text","text":"Nothing yet."}`))
	dir := t.TempDir()
	cli := cliFor("--vault", filepath.Join(dir, "new.git"), "--identity", filepath.Join(dir, "identity"))
	stdout, code, stderr := cli("", "chat", "-p", "What do you remember?", "-q")
	if code != exitOK || stdout != "Nothing yet.\n" {
		t.Fatalf("chat -p on a new vault: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "first use: created the vault") || !strings.Contains(stderr, "created the identity") {
		t.Errorf("chat -p on a new vault said %q on stderr, want that it created the vault and the identity", stderr)
	}
}
