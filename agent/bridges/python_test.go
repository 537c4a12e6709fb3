package bridges_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The Anthropic Python SDK cannot be installed on the machines this project
// builds on (no PyPI, no Debian package), so this test runs the bridge with
// plain python3 under a minimal stand-in for the two names it imports from
// the SDK, written here and nowhere else. It checks the bridge's side: the
// serve protocol, ToolError on is_error, the tool_use ids in the commits and
// the dispatch of the six typed methods. It cannot check the real SDK's
// runner; the TypeScript test does that for its SDK.
const pythonStandIn = `
from abc import ABC, abstractmethod

class ToolError(Exception):
    def __init__(self, content):
        super().__init__(content)
        self.content = content

class BetaAbstractMemoryTool(ABC):
    def __init__(self, *, cache_control=None):
        self._cache_control = cache_control

    def execute(self, command):
        return getattr(self, command.command)(command)

    @abstractmethod
    def call(self, input): ...
    @abstractmethod
    def view(self, command): ...
    @abstractmethod
    def create(self, command): ...
    @abstractmethod
    def str_replace(self, command): ...
    @abstractmethod
    def insert(self, command): ...
    @abstractmethod
    def delete(self, command): ...
    @abstractmethod
    def rename(self, command): ...
`

// pythonDriver runs the scenario three ways: tool_result (a loop of one's own,
// with tool_use ids), call (the runner's entry) and execute (typed commands).
const pythonDriver = `
import json, sys
from types import SimpleNamespace
from anthropic.lib.tools import ToolError
from memvault_memory import MemvaultMemoryTool

class Command(SimpleNamespace):
    def to_dict(self):
        return dict(vars(self))

calls = json.loads(sys.argv[1])
out = {"tool_result": [], "call": [], "execute": []}
with MemvaultMemoryTool(agent="my-py-agent") as memory:
    for c in calls:
        out["tool_result"].append(memory.tool_result(SimpleNamespace(id=c["id"], input=json.loads(c["input"]))))
    for name, run in (("call", memory.call), ("execute", lambda i: memory.execute(Command(**i)))):
        for c in calls:
            try:
                out[name].append([run(json.loads(c["input"])), False])
            except ToolError as err:
                out[name].append([err.content, True])
print(json.dumps(out))
`

func TestPythonBridge(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		skipUnlessCI(t, "python3 is not installed")
	}
	lib := t.TempDir()
	tools := filepath.Join(lib, "anthropic", "lib", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(lib, "anthropic", "__init__.py"), filepath.Join(lib, "anthropic", "lib", "__init__.py")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tools, "__init__.py"), []byte(pythonStandIn), 0o644); err != nil {
		t.Fatal(err)
	}
	bridge, err := filepath.Abs("python")
	if err != nil {
		t.Fatal(err)
	}
	calls := []map[string]string{}
	for _, c := range scenario {
		calls = append(calls, map[string]string{"id": c.id, "input": c.input})
	}

	v, env := newVault(t)
	// The scenario's first four calls: execute dispatches by command name, as
	// the SDK's does, so it has no method for an unknown command.
	cmd := exec.Command("python3", "-c", pythonDriver, mustJSON(calls[:4]))
	cmd.Env = append(env, "PYTHONPATH="+bridge+string(os.PathListSeparator)+lib, "PYTHONDONTWRITEBYTECODE=1")
	var out struct {
		ToolResult []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content"`
			IsError   bool   `json:"is_error"`
		} `json:"tool_result"`
		Call    [][2]any `json:"call"`
		Execute [][2]any `json:"execute"`
	}
	if err := json.Unmarshal([]byte(run(t, cmd)), &out); err != nil {
		t.Fatal(err)
	}
	for i, c := range scenario[:4] {
		wantErr := strings.HasPrefix(c.want, "Error: ")
		if r := out.ToolResult[i]; r.Type != "tool_result" || r.ToolUseID != c.id || r.Content != c.want || r.IsError != wantErr {
			t.Errorf("tool_result %d = %+v\nwant id %s, content %q, is_error %v", i, r, c.id, c.want, wantErr)
		}
	}
	// call and execute run the scenario again on the vault the first pass left.
	again := []string{
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n18B\t/memories/prefs.md",
		"Error: File /memories/prefs.md already exists",
		"Error: No replacement was performed, old_str `Drinks tea` did not appear verbatim in /memories/prefs.md.",
		"Error: The path /memories/nope.md does not exist. Please provide a valid path.",
	}
	for name, got := range map[string][][2]any{"call": out.Call, "execute": out.Execute} {
		for i, want := range again {
			if got[i][0] != want || got[i][1] != strings.HasPrefix(want, "Error: ") {
				t.Errorf("%s %d = %q, %v; want %q", name, i, got[i][0], got[i][1], want)
			}
		}
	}
	checkCommits(t, v, "my-py-agent", true)
}
