package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServersAcrossGC: a `memvault mcp` (stdio, as Claude Code runs it) and a
// `memvault serve` stay open on a vault of files of every size class while
// other processes write and run `memvault gc`, and while the MCP server's
// own writes merge packs by themselves. After each round both read every
// file as it is, the MCP server blames a file at an old commit and lists its
// history. Files above 16 KiB were once answered "does not exist" after a
// merge, for good, by a process that had them open.
func TestServersAcrossGC(t *testing.T) {
	flags := initVault(t) // --vault DIR --identity FILE
	cli := cliFor(flags...)
	// The servers' own writes merge packs after a few flushes.
	if out, err := exec.Command("git", "--git-dir", flags[1], "config", "gc.auto", "4").CombinedOutput(); err != nil {
		t.Fatalf("git config gc.auto: %v\n%s", err, out)
	}
	rnd := rand.New(rand.NewPCG(11, 12))
	text := func(n int) string {
		const letters = "abcdefghijklmnopqrstuvwxyz      \n"
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rnd.IntN(len(letters))]
		}
		return string(b)
	}
	want := map[string]string{}
	tool := func(input map[string]any) {
		t.Helper()
		in, _ := json.Marshal(input)
		if out, code, stderr := cli(string(in), "tool"); code != exitOK {
			t.Fatalf("memvault tool %s: status %d: %s %s", in, code, out, stderr)
		}
	}
	// Twelve files of 40 KB and one of each other size class, each edited
	// three times: history to blame through.
	sizes := map[string]int{"small.md": 300, "big.md": 600 << 10}
	for i := range 12 {
		sizes[fmt.Sprintf("f%02d.md", i)] = 40 << 10
	}
	for name, n := range sizes {
		p := "/memories/" + name
		want[p] = "v0\n" + text(n)
		tool(map[string]any{"command": "create", "path": p, "file_text": want[p]})
	}
	for edit := 1; edit <= 2; edit++ {
		for p := range want {
			old := fmt.Sprintf("v%d\n", edit-1)
			tool(map[string]any{"command": "str_replace", "path": p, "old_str": old, "new_str": fmt.Sprintf("v%d\n", edit)})
			want[p] = strings.Replace(want[p], old, fmt.Sprintf("v%d\n", edit), 1)
		}
	}
	log, code, stderr := cli("", "log", "--json")
	if code != exitOK {
		t.Fatalf("memvault log: %s", stderr)
	}
	recs, err := decodeLog(log)
	if err != nil {
		t.Fatal(err)
	}
	old := recs[len(recs)/2].Commit // a commit from among the edits

	// One pack, which the servers' first reads open.
	if out, code, stderr := cli("", "gc"); code != exitOK {
		t.Fatalf("memvault gc: %s %s", out, stderr)
	}

	env := append(os.Environ(), envVault+"="+flags[1], envIdentity+"="+flags[3])
	exe := memvaultExe(t)
	ctx := context.Background()
	mcpCmd := exec.Command(exe, "mcp")
	mcpCmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "v1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatalf("connect to memvault mcp: %v", err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("CallTool(%s %v) = %v", name, args, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}

	serveCmd := exec.Command(exe, "serve")
	serveCmd.Env = env
	serveIn, err := serveCmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	serveOut, err := serveCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serveCmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serveIn.Close(); serveCmd.Wait() }()
	answers := bufio.NewScanner(serveOut)
	answers.Buffer(nil, 8<<20)
	serveID := 0
	serve := func(input map[string]any) (string, bool) {
		t.Helper()
		serveID++
		line, _ := json.Marshal(map[string]any{"id": serveID, "input": input})
		if _, err := serveIn.Write(append(line, '\n')); err != nil {
			t.Fatalf("write to memvault serve: %v", err)
		}
		if !answers.Scan() {
			t.Fatalf("memvault serve ended: %v", answers.Err())
		}
		var a struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal(answers.Bytes(), &a); err != nil {
			t.Fatalf("serve answer %q: %v", answers.Text(), err)
		}
		return a.Content, a.IsError
	}

	// Each round reads first what the servers have not read yet (their
	// caches of decrypted files would hide a failed read), then the rest.
	readOrder := func(round int) []string {
		var fresh, rest []string
		for p := range want {
			if p == fmt.Sprintf("/memories/f%02d.md", 2*round) || p == fmt.Sprintf("/memories/f%02d.md", 2*round+1) || round == 1 && p == "/memories/big.md" {
				fresh = append(fresh, p)
			} else if round > 0 {
				rest = append(rest, p)
			}
		}
		return append(fresh, rest...)
	}
	checkAll := func(round int) {
		t.Helper()
		for _, p := range readOrder(round) {
			content := want[p]
			// The view answer is cut at 16,000 characters: ask for the
			// first line and the last, each of which reads the whole file.
			lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
			for _, probe := range []struct {
				from int
				line string
			}{{1, lines[0]}, {len(lines), lines[len(lines)-1]}} {
				view := map[string]any{"command": "view", "path": p, "view_range": []int{probe.from, probe.from}}
				for face, got := range map[string]func() (string, bool){
					"mcp":   func() (string, bool) { return call("memory", view) },
					"serve": func() (string, bool) { return serve(view) },
				} {
					answer, isErr := got()
					if isErr || !strings.Contains(answer, fmt.Sprintf("%6d\t%s", probe.from, probe.line)) {
						t.Fatalf("round %d: %s view %s line %d = %.300q, error %v; want %q", round, face, p, probe.from, answer, isErr, probe.line)
					}
				}
			}
		}
		// Blame at an old commit reads old versions no one read before.
		for _, p := range []string{fmt.Sprintf("/memories/f%02d.md", 11-round), "/memories/big.md"} {
			if answer, isErr := call("blame", map[string]any{"path": p, "at": old}); isErr {
				t.Fatalf("round %d: mcp blame %s at %s = %.300q", round, p, old, answer)
			}
			if answer, isErr := call("history", map[string]any{"path": p}); isErr || !strings.Contains(answer, "create") {
				t.Fatalf("round %d: mcp history %s = %.300q", round, p, answer)
			}
		}
	}
	checkAll(0)

	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	for round := 1; round <= rounds; round++ {
		// Another process writes and merges every pack into one.
		for p := range want {
			if rnd.IntN(3) == 0 && !strings.HasPrefix(p, "/memories/own/") {
				next := fmt.Sprintf("r%d\n", round)
				tool(map[string]any{"command": "str_replace", "path": p, "old_str": strings.SplitN(want[p], "\n", 2)[0] + "\n", "new_str": next})
				want[p] = next + strings.SplitN(want[p], "\n", 2)[1]
			}
		}
		if out, code, stderr := cli("", "gc"); code != exitOK {
			t.Fatalf("round %d: memvault gc: %s %s", round, out, stderr)
		}
		checkAll(round)
		// The MCP server writes until its own automatic merges run.
		for i := range 12 {
			p := fmt.Sprintf("/memories/own/r%d-%d.md", round, i)
			want[p] = text(20 << 10)
			if answer, isErr := call("memory", map[string]any{"command": "create", "path": p, "file_text": want[p]}); isErr {
				t.Fatalf("round %d: mcp create %s = %q", round, p, answer)
			}
		}
		checkAll(round)
	}
}
