package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var rssDuration = flag.Duration("rss.duration", 0,
	"run TestRSS's agent-like workload this long (10m for the README's figure); 0 skips the test")

// rssLimit is the most a memvault process may hold resident (DESIGN's target).
const rssLimit = 150 << 20

// TestRSS measures the resident size of `memvault serve`, `memvault mcp` and
// `memvault ui` (in a pseudo-terminal) on one 10,000-file vault while an
// agent-like workload runs through serve and mcp for -rss.duration: list the
// tree, view files, create, edit and insert into new ones, delete old ones.
// The UI watches the vault and redraws as it changes. Each process is sampled
// every few seconds; none may pass 150 MB, and none may grow: the largest
// sample of the last third of the run may not pass that of the middle third
// by more than 10% (plus 4 MB for the garbage collector's slack).
//
//	go test ./cmd/memvault -run TestRSS -rss.duration 10m -v
func TestRSS(t *testing.T) {
	if *rssDuration == 0 {
		t.Skip("skipped: set -rss.duration (10m for the figure) to run it")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "memvault")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	const files = 10000
	vaulttest.Seed(t, v, files, 1)
	v.Close()
	env := append(os.Environ(), envVault+"="+filepath.Join(dir, "vault.git"), envIdentity+"="+opts.IdentityFile)

	// serve
	serve := exec.Command(exe, "serve")
	serve.Env = env
	serveIn, _ := serve.StdinPipe()
	serveOut, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serveIn.Close(); serve.Wait() }()
	answers := bufio.NewReader(serveOut)
	viaServe := func(input map[string]any) string {
		line, _ := json.Marshal(map[string]any{"id": 1, "input": input})
		if _, err := serveIn.Write(append(line, '\n')); err != nil {
			t.Fatalf("serve: %v", err)
		}
		ans, err := answers.ReadBytes('\n')
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		return string(ans)
	}

	// mcp
	mcpCmd := exec.Command(exe, "mcp")
	mcpCmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rss", Version: "v1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatalf("connect to memvault mcp: %v", err)
	}
	defer cs.Close()
	viaMCP := func(input map[string]any) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory", Arguments: input})
		if err != nil {
			t.Fatalf("mcp: %v", err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}

	// ui, in a pseudo-terminal of 40 rows and 120 columns made by script(1)
	pids := map[string]int{"serve": serve.Process.Pid, "mcp": mcpCmd.Process.Pid}
	var uiIn io.WriteCloser
	if _, err := exec.LookPath("script"); err == nil {
		ui := exec.Command("script", "-qfc", "stty rows 40 cols 120; exec "+exe+" ui", "/dev/null")
		ui.Env = append(env, "TERM=xterm-256color")
		uiIn, _ = ui.StdinPipe()
		ui.Stdout = io.Discard
		if err := ui.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { uiIn.Write([]byte("q")); uiIn.Close(); ui.Process.Kill(); ui.Wait() }()
		for range 100 { // script's child becomes memvault ui
			if pid := childPid(ui.Process.Pid); pid > 0 && strings.HasSuffix(readlink(pid), "memvault") {
				pids["ui"] = pid
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if pids["ui"] == 0 {
			t.Errorf("memvault ui did not start under script(1)")
		}
	} else {
		t.Log("no script(1): memvault ui is not measured")
	}

	var mu sync.Mutex
	samples := map[string][]int64{}
	sample := func() {
		mu.Lock()
		defer mu.Unlock()
		for name, pid := range pids {
			if n := rss(pid); n > 0 {
				samples[name] = append(samples[name], n)
			}
		}
	}
	done := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(max(*rssDuration/60, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
				if uiIn != nil {
					uiIn.Write([]byte("j")) // move in the tree: the UI reads and renders
				}
			}
		}
	})

	deadline := time.Now().Add(*rssDuration)
	commands := 0
	for i := 0; time.Now().Before(deadline); i++ {
		p := fmt.Sprintf("/memories/d%03d/agent-%d.md", i%100, i)
		seeded := vaulttest.FilePath(i * 7919 % files)
		text := string(vaulttest.Content(i)) + "status: TODO\n"
		call := viaServe
		if i%2 == 1 {
			call = viaMCP
		}
		for _, in := range []map[string]any{
			{"command": "view", "path": "/memories"},
			{"command": "view", "path": seeded},
			{"command": "create", "path": p, "file_text": text},
			{"command": "str_replace", "path": p, "old_str": "status: TODO", "new_str": "status: DONE"},
			{"command": "insert", "path": p, "insert_line": 1, "insert_text": "seen again"},
			{"command": "view", "path": p},
		} {
			if ans := call(in); strings.Contains(ans, `"is_error":true`) || strings.HasPrefix(ans, "Error:") {
				t.Fatalf("%v answered %s", in, ans)
			}
			commands++
		}
		if i >= 50 { // an agent forgets: the vault stays near 10,000 files
			old := fmt.Sprintf("/memories/d%03d/agent-%d.md", (i-50)%100, i-50)
			call(map[string]any{"command": "delete", "path": old})
			commands++
		}
	}
	close(done)
	sampler.Wait()
	sample()

	for _, name := range []string{"serve", "mcp", "ui"} {
		s := samples[name]
		if len(s) < 3 {
			if name != "ui" || pids["ui"] != 0 {
				t.Errorf("%s: %d samples of its resident size", name, len(s))
			}
			continue
		}
		third := len(s) / 3
		mid, last := slices.Max(s[third:2*third]), slices.Max(s[2*third:])
		peak := slices.Max(s)
		t.Logf("%-5s resident MB: first %.1f, peak %.1f, middle third peak %.1f, last third peak %.1f, %d samples",
			name, mb(s[0]), mb(peak), mb(mid), mb(last), len(s))
		if peak > rssLimit {
			t.Errorf("%s: peak resident size %.1f MB, over %d MB", name, mb(peak), rssLimit>>20)
		}
		if float64(last) > float64(mid)*1.10+4<<20 {
			t.Errorf("%s: grew from %.1f MB to %.1f MB between the middle and last thirds of the run", name, mb(mid), mb(last))
		}
	}
	t.Logf("%d commands in %v on a %d-file vault", commands, *rssDuration, files)
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// rss returns the resident size of process pid in bytes, or 0.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// childPid returns the first child of process pid, or 0.
func childPid(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

func readlink(pid int) string {
	s, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return s
}
