package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMCPStdioBadLines: memvault mcp on stdio answers a line that is
// not JSON, one cut short, one nested too deep, a batch, JSON that is no
// message and a line over the vault's maxRequestLine with a JSON-RPC error, and
// goes on serving; at the end of its input it exits with status 0 and says
// nothing on stderr. The lines are written raw to the process's stdin.
func TestMCPStdioBadLines(t *testing.T) {
	flags := initVault(t) // --vault DIR --identity FILE
	if out, err := exec.Command("git", "--git-dir", flags[1], "config", "memvault.maxRequestLine", "65536").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not JSON`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"deep":` + deep + `}}`,
		`{"id":4,"jsonrpc":"2.0","method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/big.md","file_text":"` + strings.Repeat("x", 70000) + `"}}}`,
		`[]`,
		`[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`,
		`{"id":6,"method":"tools/list"}`,
		`42`,
		``,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/ok.md","file_text":"still serving\n"}}}`,
	}
	cmd := exec.Command(memvaultExe(t), "mcp")
	cmd.Env = append(os.Environ(), envVault+"="+flags[1], envIdentity+"="+flags[3])
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || stderr.Len() > 0 {
			t.Errorf("memvault mcp at the end of its input: %v, stderr %q; want status 0 and nothing on stderr", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("memvault mcp did not exit at the end of its input; stdout so far:\n%s", stdout.String())
	}

	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var errs []string // "id code" of each error answer, in order
	results := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", sc.Text(), err)
		}
		if a.Error != nil {
			errs = append(errs, string(a.ID)+" "+strconv.Itoa(a.Error.Code))
			if a.Error.Message == "" {
				t.Errorf("error answer %s has no message", sc.Text())
			}
			continue
		}
		if len(a.Result) > 0 {
			results[string(a.ID)] = true
		}
	}
	want := []string{"null -32700", "null -32700", "null -32700", "4 -32600", "null -32600", "null -32600", "6 -32600", "null -32600"}
	if strings.Join(errs, ", ") != strings.Join(want, ", ") {
		t.Errorf("error answers (id code) = %v, want %v\nstdout:\n%s", errs, want, stdout.String())
	}
	if !results["1"] || !results["7"] {
		t.Errorf("results for ids %v, want 1 (initialize) and 7 (a create after the bad lines)", results)
	}
	if got, code, stderr := cliFor(flags...)("", "cat", "ok.md"); code != exitOK || got != "still serving\n" {
		t.Errorf("after the bad lines, cat ok.md = %q, status %d, %s; want the file the last request made", got, code, stderr)
	}
}
