package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
)

// Sizes of TestConcurrentWriters: 8 processes and 8 goroutines
// each sending 200 commands, 3,200 commits in all.
const (
	concProcs    = 8
	concRoutines = 8
	concCommands = 200
)

// TestConcurrentWriters runs 8 `memvault serve` processes and 8 goroutines
// (two agent.Handlers on one in-process vault) that each send 200 commands to
// one vault at once: a create of its own file, then inserts alternately into its
// own file and into one shared file. A reader goroutine meanwhile takes
// snapshots, lists and reads as the TUI does. Afterwards every command has been
// answered without error, the history holds exactly one commit per command, each
// with one parent, and every inserted line is in its file: nothing was lost.
func TestConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("3,200 durable commits")
	}
	ctx := context.Background()
	p := newProcess(t, t.TempDir())
	p.run(t, "", "init")
	p.tool(t, map[string]any{"command": "create", "path": "/memories/shared.md", "file_text": "shared"})

	v, err := vault.Open(ctx, p.vault, vault.Options{IdentityFile: p.identity})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	before, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	report := func(format string, args ...any) {
		select {
		case errs <- fmt.Sprintf(format, args...):
		default:
		}
	}
	for w := range concProcs {
		wg.Go(func() { serveWriter(t, p, w, report) })
	}
	handlers := []*agent.Handler{agent.New(agent.Vault(v), agent.Options{Agent: "conc-a"}), agent.New(agent.Vault(v), agent.Options{Agent: "conc-b"})}
	for g := range concRoutines {
		w := concProcs + g
		h := handlers[g%len(handlers)]
		wg.Go(func() {
			for i, in := range writerInputs(w) {
				content, isErr := h.Handle(ctx, in, fmt.Sprintf("toolu_%02d_%03d", w, i))
				if isErr {
					report("writer %d command %d: %s", w, i, content)
				}
			}
		})
	}
	stop := make(chan struct{})
	var reads atomic.Int64
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		tuiReader(ctx, v, stop, &reads, report)
	}()
	wg.Wait()
	close(stop)
	<-readerDone
	elapsed := time.Since(start)
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		return
	}

	after, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writers := concProcs + concRoutines
	if got, want := len(after)-len(before), writers*concCommands; got != want {
		t.Errorf("commits made = %d, want %d", got, want)
	}
	for _, r := range after {
		if len(r.Parents) > 1 {
			t.Errorf("commit %s has %d parents, want a linear history", r.Commit, len(r.Parents))
		}
	}
	if root := after[len(after)-1]; len(root.Parents) != 0 {
		t.Errorf("oldest commit %s has parents %v", root.Commit, root.Parents)
	}

	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shared := readLines(ctx, t, snap, "/memories/shared.md")
	for w := range writers {
		own := readLines(ctx, t, snap, fmt.Sprintf("/memories/w%02d.md", w))
		for i := range concCommands {
			line := writerLine(w, i)
			in := own
			if i%2 == 0 && i > 0 {
				in = shared
			}
			if !in[line] {
				t.Errorf("line %q lost", line)
			}
		}
	}
	t.Logf("%d commands from %d processes and %d goroutines in %v (%.0f commits/s); %d TUI-style reads alongside",
		writers*concCommands, concProcs, concRoutines, elapsed.Round(time.Millisecond),
		float64(writers*concCommands)/elapsed.Seconds(), reads.Load())
}

// writerLine is the line writer w's command i adds.
func writerLine(w, i int) string { return fmt.Sprintf("w%02d c%03d", w, i) }

// writerInputs are writer w's commands: create its own file, then insert lines,
// odd commands into its own file and even ones into the shared file.
func writerInputs(w int) [][]byte {
	own := fmt.Sprintf("/memories/w%02d.md", w)
	ins := make([][]byte, concCommands)
	for i := range ins {
		var in map[string]any
		switch {
		case i == 0:
			in = map[string]any{"command": "create", "path": own, "file_text": writerLine(w, i)}
		case i%2 == 1:
			in = map[string]any{"command": "insert", "path": own, "insert_line": 1, "insert_text": writerLine(w, i)}
		default:
			in = map[string]any{"command": "insert", "path": "/memories/shared.md", "insert_line": 0, "insert_text": writerLine(w, i)}
		}
		ins[i], _ = json.Marshal(in)
	}
	return ins
}

// serveWriter streams writer w's commands into one memvault serve process and
// checks that each gets one answer, in order, not an error.
func serveWriter(t *testing.T, p *process, w int, report func(string, ...any)) {
	cmd := exec.Command(p.exe, "serve", "--agent", fmt.Sprintf("conc-proc-%d", w))
	cmd.Env = p.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		report("writer %d: %v", w, err)
		return
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		report("writer %d: %v", w, err)
		return
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		report("writer %d: %v", w, err)
		return
	}
	go func() {
		defer stdin.Close()
		for i, in := range writerInputs(w) {
			line := fmt.Sprintf(`{"id":%d,"tool_use_id":"toolu_%02d_%03d","input":%s}`+"\n", i, w, i, in)
			if _, err := stdin.Write([]byte(line)); err != nil {
				return
			}
		}
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var a struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			report("writer %d: answer %q: %v", w, sc.Text(), err)
		} else if a.ID != n || a.IsError {
			report("writer %d: answer %d = {id %d, %q}, want id %d and no error", w, n, a.ID, a.Content, n)
		}
		n++
	}
	if err := cmd.Wait(); err != nil {
		report("writer %d: memvault serve: %v\nstderr: %s", w, err, stderr.String())
	}
	if n != concCommands {
		report("writer %d: %d answers, want %d", w, n, concCommands)
	}
}

// tuiReader reads the vault as the TUI does, until stop: a snapshot, the root
// listing, then every file in it, each read whole.
func tuiReader(ctx context.Context, v *vault.Vault, stop <-chan struct{}, reads *atomic.Int64, report func(string, ...any)) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		snap, err := v.Snapshot(ctx)
		if err != nil {
			report("reader: snapshot: %v", err)
			return
		}
		es, err := snap.List(ctx, vault.Root)
		if err != nil {
			report("reader: list: %v", err)
			return
		}
		for _, e := range es {
			if e.Dir {
				continue
			}
			if _, err := snap.ReadFile(ctx, vault.Root+"/"+e.Name); err != nil {
				report("reader: read %s: %v", e.Name, err)
				return
			}
		}
		if _, err := v.Log(ctx, vault.LogOptions{Limit: 50}); err != nil {
			report("reader: log: %v", err)
			return
		}
		reads.Add(1)
		time.Sleep(25 * time.Millisecond)
	}
}

func readLines(ctx context.Context, t *testing.T, s *vault.Snapshot, p string) map[string]bool {
	t.Helper()
	b, err := s.ReadFile(ctx, p)
	if err != nil {
		t.Fatalf("ReadFile(%q): %v", p, err)
	}
	lines := map[string]bool{}
	for l := range strings.SplitSeq(string(b), "\n") {
		lines[l] = true
	}
	return lines
}
