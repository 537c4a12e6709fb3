package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
)

// lockedBuffer is a bytes.Buffer a process writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// eventually waits, up to limit, until cond holds, looking every 50ms.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !cond() {
		if time.Since(t0) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(t0)
}

// TestSyncWatchProcesses: the agent-friendly ways to keep clones in
// sync, as whole processes at a git daemon on loopback. Clone a runs
// `memvault sync --watch`, clone b `memvault serve --sync-every`: a write
// through a's memory tool shows up in b's serve, and a write through b's serve
// in a, within seconds. Each process logs one line per sync; sync --watch
// stops cleanly, with status 0, on SIGTERM, and serve at the end of its input.
func TestSyncWatchProcesses(t *testing.T) {
	d := gittest.NewDaemon(t)
	root := t.TempDir()
	a := newProcess(t, root)
	a.run(t, "", "init")
	a.tool(t, map[string]any{"command": "create", "path": "/memories/start.md", "file_text": "start\n"})
	a.run(t, "", "remote", "add", "origin", d.URL)
	a.run(t, "", "sync")
	b := &process{exe: a.exe, vault: filepath.Join(root, "b.git"), identity: a.identity}
	for _, e := range a.env {
		if !strings.HasPrefix(e, envVault+"=") {
			b.env = append(b.env, e)
		}
	}
	b.env = append(b.env, envVault+"="+b.vault)
	b.run(t, "", "clone", d.URL, b.vault)

	// A regression must fail the test, not hang it.
	pctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func(p *process, args ...string) (*exec.Cmd, *lockedBuffer) {
		cmd := exec.CommandContext(pctx, p.exe, args...)
		cmd.Env = p.env
		cmd.WaitDelay = 10 * time.Second
		logs := &lockedBuffer{}
		cmd.Stderr = logs
		return cmd, logs
	}
	watch, watchLog := start(a, "sync", "--watch", "--every", "300ms")
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	serve, serveLog := start(b, "serve", "--sync-every", "300ms")
	inW, err := serve.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewScanner(out)
	id := 0
	call := func(input map[string]any) string {
		t.Helper()
		id++
		line, _ := json.Marshal(map[string]any{"id": id, "input": input})
		if _, err := inW.Write(append(line, '\n')); err != nil {
			t.Fatalf("serve: %v", err)
		}
		if !answers.Scan() {
			t.Fatalf("serve ended: %v\n%s", answers.Err(), serveLog)
		}
		var ans struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(answers.Bytes(), &ans); err != nil {
			t.Fatalf("serve answered %q: %v", answers.Bytes(), err)
		}
		return ans.Content
	}
	const limit = 20 * time.Second // the bound; it takes about a second
	for _, l := range []*lockedBuffer{watchLog, serveLog} {
		eventually(t, limit, "the first sync", func() bool { return strings.Contains(l.String(), "sync (start): up to date") })
	}

	a.tool(t, map[string]any{"command": "create", "path": "/memories/from-a.md", "file_text": "written by a\n"})
	took := eventually(t, limit, "a's write in b's serve", func() bool {
		return strings.Contains(call(map[string]any{"command": "view", "path": "/memories/from-a.md"}), "written by a")
	})
	t.Logf("a's write showed up in b's serve after %v", took.Round(time.Millisecond))
	call(map[string]any{"command": "create", "path": "/memories/from-b.md", "file_text": "written by b\n"})
	took = eventually(t, limit, "b's write in a", func() bool {
		cmd := exec.Command(a.exe, "cat", "/memories/from-b.md")
		cmd.Env = a.env
		got, err := cmd.Output()
		return err == nil && string(got) == "written by b\n"
	})
	t.Logf("b's write showed up in a after %v", took.Round(time.Millisecond))

	// sync --watch stops cleanly on SIGTERM; serve at the end of its stdin, as
	// it always did, and its syncing with it.
	for _, p := range []struct {
		name string
		cmd  *exec.Cmd
		log  *lockedBuffer
		want []string // lines the log must hold, as patterns
	}{
		{"sync --watch", watch, watchLog, []string{
			`(?m)^memvault: sync \((write|interval)\): push; head [0-9a-f]{12}; remote up to date \(\d`,
			`(?m)^memvault: sync \(interval\): fast-forward; head [0-9a-f]{12}; remote up to date \(\d`,
			`(?m)^memvault: stopped syncing$`,
		}},
		{"serve --sync-every", serve, serveLog, []string{
			`(?m)^memvault: sync \(interval\): fast-forward; head [0-9a-f]{12}; remote up to date \(\d`,
			`(?m)^memvault: sync \((write|interval)\): push; head [0-9a-f]{12}; remote up to date \(\d`,
		}},
	} {
		if p.cmd == serve {
			inW.Close()
		} else if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				err = fmt.Errorf("exit status %d", exit.ExitCode())
			}
			t.Errorf("%s after SIGTERM: %v, want status 0\n%s", p.name, err, p.log)
		}
		for _, re := range p.want {
			if !regexp.MustCompile(re).MatchString(p.log.String()) {
				t.Errorf("%s logged\n%s\nwant a line matching %s", p.name, p.log, re)
			}
		}
	}
}

// TestServeSyncNeverBlocks: serve --sync-every against a remote
// that takes the connection and never answers. The sync in the background
// hangs, and every memory tool call is still answered at once; at the end of
// its input serve stops, the hung sync with it.
func TestServeSyncNeverBlocks(t *testing.T) {
	root := t.TempDir()
	p := newProcess(t, root)
	p.run(t, "", "init")
	p.run(t, "", "remote", "add", "origin", "git://"+silentServer(t)+"/vault.git")
	pctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(pctx, p.exe, "serve", "--sync-every", "100ms")
	cmd.Env = p.env
	cmd.WaitDelay = 10 * time.Second
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewScanner(out)
	for i := range 20 {
		t0 := time.Now()
		line, _ := json.Marshal(map[string]any{"id": i, "input": map[string]any{
			"command": "create", "path": fmt.Sprintf("/memories/n%d.md", i), "file_text": "note\n"}})
		if _, err := in.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		if !answers.Scan() {
			t.Fatalf("serve ended: %v\n%s", answers.Err(), logs)
		}
		if !strings.Contains(answers.Text(), "File created successfully") {
			t.Errorf("create %d = %s", i, answers.Text())
		}
		// A write takes milliseconds; a sync waiting on the remote would
		// take until its 2-minute timeout.
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("create %d took %v while a sync hung", i, d)
		}
	}
	in.Close()
	t0 := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve at the end of its input: %v, want status 0\n%s", err, logs)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("serve took %v to stop with a sync hung", d)
	}
	if strings.Contains(logs.String(), "memvault: sync (") {
		t.Errorf("serve logged a sync outcome, but the remote never answered:\n%s", logs)
	}
}
