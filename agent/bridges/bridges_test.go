// Package bridges_test runs the Python and TypeScript bridges of this folder
// against a real `memvault serve`, built from this module, on a fresh vault.
package bridges_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// memvaultDir holds the memvault binary the bridges start, built by TestMain.
var memvaultDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memvault-bridges")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "memvault"), "github.com/memvault/memvault/cmd/memvault")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build memvault: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	memvaultDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// skipUnlessCI skips tb for what is missing on this machine (a tool, a package
// install), but fails it where CI is set, as CI sets it (CI=true): there the
// tools are installed on purpose, so a bridge that did not run is a failure,
// not a line in the list of skips.
func skipUnlessCI(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		tb.Fatalf("CI=%s, where this must run: "+format, append([]any{ci}, args...)...)
	}
	tb.Skipf("skipped: "+format, args...)
}

// call is one memory tool call of a scenario and the answer it must get.
type call struct {
	id, input, want string
}

// scenario is the story both bridges tell: the calls of one model response,
// in order (the third edits what the second creates), with two error answers.
var scenario = []call{
	{"toolu_b1", `{"command":"view","path":"/memories"}`,
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"},
	{"toolu_b2", `{"command":"create","path":"/memories/prefs.md","file_text":"Drinks tea.\n"}`,
		"File created successfully at: /memories/prefs.md"},
	{"toolu_b3", `{"command":"str_replace","path":"/memories/prefs.md","old_str":"Drinks tea","new_str":"Drinks green tea"}`,
		"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tDrinks green tea.\n     2\t"},
	{"toolu_b4", `{"command":"view","path":"/memories/nope.md"}`,
		"Error: The path /memories/nope.md does not exist. Please provide a valid path."},
	{"toolu_b5", `{"command":"list","path":"/memories"}`,
		"Error: Unknown command: list"},
}

// newVault makes a vault and the environment that points memvault at it.
func newVault(t *testing.T) (*vault.Vault, []string) {
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	env := append(os.Environ(),
		"PATH="+memvaultDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MEMVAULT_DIR="+filepath.Join(dir, "vault.git"),
		"MEMVAULT_IDENTITY="+opts.IdentityFile,
	)
	return v, env
}

// checkCommits checks the commits of the scenario's two changes.
func checkCommits(t *testing.T, v *vault.Vault, agent string, withIDs bool) {
	t.Helper()
	recs, err := v.Log(context.Background(), vault.LogOptions{Limit: 2})
	if err != nil || len(recs) != 2 {
		t.Fatalf("Log = %v, %v", recs, err)
	}
	for i, want := range []struct{ command, id string }{{"str_replace", "toolu_b3"}, {"create", "toolu_b2"}} {
		if !withIDs {
			want.id = ""
		}
		if r := recs[i]; r.Command != want.command || r.ToolUseID != want.id || r.Agent != agent {
			t.Errorf("commit %d: %s, Tool-Use-Id %q, Agent %q; want %s, %q, %q", i, r.Command, r.ToolUseID, r.Agent,
				want.command, want.id, agent)
		}
	}
}

// run runs a command and returns its stdout, failing the test with its stderr.
func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(cmd.Args, " "), err, out, stderr.String())
	}
	return string(out)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
