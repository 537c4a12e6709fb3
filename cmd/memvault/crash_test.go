package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// TestCrashSafety streams writes into `memvault serve` and kills it with SIGKILL at
// random moments, 100 times, half of them after its input ended, while it
// finishes, flushes and merges. After every kill git fsck --strict must pass
// before memvault opens the vault, and the vault must pass memvault's fsck, hold every
// write that was acknowledged, and hold nothing half-applied: each file present is
// whole, and there is exactly one commit per file.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 100 processes")
	}
	p := newProcess(t, t.TempDir())
	p.run(t, "", "init")
	rng := rand.New(rand.NewPCG(7, 11))
	all := map[string]string{}
	for kill := range 100 {
		recent := p.killServeMidStream(t, kill, time.Duration(rng.IntN(40000))*time.Microsecond)
		for path, text := range recent {
			all[path] = text
		}
		// After every kill, this kill's writes and the commit count; after every
		// tenth, fsck and every write so far.
		if kill%10 == 9 {
			checkAfterCrash(t, p, kill, all, true)
		} else {
			checkAfterCrash(t, p, kill, recent, false)
		}
	}
	if out := p.run(t, "", "fsck"); withoutNotes(out) != "ok: history, objects, encryption and identity are sound\n" {
		t.Errorf("memvault fsck after 100 kills: %q", out)
	}
	t.Logf("%d writes acknowledged across 100 kills", len(all))
}

// withoutNotes is fsck's output without its notes on the process (core dumps,
// memory locking), which depend on the machine the tests run on.
func withoutNotes(fsckOut string) string {
	var b strings.Builder
	for line := range strings.Lines(fsckOut) {
		if !strings.HasPrefix(line, "note: ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func crashContent(path string) string { return "content of " + path + "\n" }

// killServeMidStream pipes creates into memvault serve, kills it after wait, and
// returns the writes it acknowledged.
func (p *process) killServeMidStream(t *testing.T, kill int, wait time.Duration, flags ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(p.exe, append([]string{"serve"}, flags...)...)
	cmd.Env = p.env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 200)
	go func() {
		for i := range paths {
			paths[i] = fmt.Sprintf("/memories/k%03d/f%03d.md", kill, i)
			req, _ := json.Marshal(map[string]any{"id": i, "tool_use_id": fmt.Sprintf("toolu_%d_%d", kill, i),
				"input": map[string]any{"command": "create", "path": paths[i], "file_text": crashContent(paths[i])}})
			if _, err := stdin.Write(append(req, '\n')); err != nil {
				return
			}
		}
		// Every other run, the input ends: the server answers the rest,
		// flushes its journal, merges packs and exits, and the kill may land
		// in any of that.
		if kill%2 == 1 {
			stdin.Close()
		}
	}()
	acked := map[string]string{}
	var mu sync.Mutex
	done := make(chan struct{})
	first := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		defer once.Do(func() { close(first) })
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var a struct {
				ID      int    `json:"id"`
				IsError bool   `json:"is_error"`
				Content string `json:"content"`
			}
			if json.Unmarshal(sc.Bytes(), &a) == nil && !a.IsError {
				mu.Lock()
				acked[fmt.Sprintf("/memories/k%03d/f%03d.md", kill, a.ID)] = crashContent(fmt.Sprintf("/memories/k%03d/f%03d.md", kill, a.ID))
				mu.Unlock()
			}
			once.Do(func() { close(first) })
		}
		io.Copy(io.Discard, stdout)
	}()
	// Kill mid-stream: once the server answers, after a random delay.
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatalf("kill %d: memvault serve did not answer", kill)
	}
	time.Sleep(wait)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	return acked
}

func checkAfterCrash(t *testing.T, p *process, kill int, acked map[string]string, full bool) {
	t.Helper()
	// git reads the vault as the kill left it, before memvault opens it.
	if out, err := exec.Command("git", "--git-dir", p.vault, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("after kill %d: git fsck --strict: %v\n%s", kill, err, out)
	}
	ctx := context.Background()
	v, err := vault.Open(ctx, p.vault, vault.Options{IdentityFile: p.identity})
	if err != nil {
		t.Fatalf("after kill %d: open: %v", kill, err)
	}
	defer v.Close()
	if full {
		if problems, err := v.Fsck(ctx); err != nil || len(problems) > 0 {
			t.Fatalf("after kill %d: fsck = %v, %v", kill, problems, err)
		}
	}
	snap, _ := v.Snapshot(ctx)
	for path, want := range acked {
		if got, err := snap.ReadFile(ctx, path); err != nil || string(got) != want {
			t.Fatalf("after kill %d: acknowledged %s reads %q, %v", kill, path, got, err)
		}
	}
	files := 0
	dirs, _ := snap.List(ctx, "/memories")
	for _, d := range dirs {
		es, _ := snap.List(ctx, "/memories/"+d.Name)
		for _, e := range es {
			path := "/memories/" + d.Name + "/" + e.Name
			// Every file present is whole: written (acknowledged or not) entirely.
			if e.Size != int64(len(crashContent(path))) {
				t.Fatalf("after kill %d: %s is %d bytes, want %d", kill, path, e.Size, len(crashContent(path)))
			}
			if full || d.Name == fmt.Sprintf("k%03d", kill) {
				if got, err := snap.ReadFile(ctx, path); err != nil || string(got) != crashContent(path) {
					t.Fatalf("after kill %d: %s reads %q, %v", kill, path, got, err)
				}
			}
			files++
		}
	}
	recs, _ := v.Log(ctx, vault.LogOptions{})
	if len(recs) != files+1 {
		t.Fatalf("after kill %d: %d commits for %d files (+ init)", kill, len(recs), files)
	}
}

// TestKillImportRekeyGC kills `memvault import`, `rekey` and `gc` with SIGKILL at
// random moments, 30 times in all (9 under the race detector). After each kill
// git fsck --strict passes before memvault opens the vault; an import is there
// whole or not at all; an interrupted rekey is finished by the next one, and
// every file reads.
func TestKillImportRekeyGC(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 30 processes")
	}
	root := t.TempDir()
	p := newProcess(t, root)
	p.run(t, "", "init")
	p.run(t, `{"command":"create","path":"/memories/kept.md","file_text":"kept\n"}`, "tool")
	src := filepath.Join(root, "import")
	const imported = 300
	for i := range imported {
		if err := os.MkdirAll(filepath.Join(src, "d"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "d", fmt.Sprintf("f%03d.md", i)), []byte(crashContent(fmt.Sprint(i))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	whole, none := 0, 0
	kills := 30
	if raceEnabled {
		kills = 9 // each command takes many times as long; the suite has a deadline
	}
	for kill := range kills {
		// Each kill lands anywhere in its command's run, start-up included:
		// an import of 300 files takes about 0.3 s, a rekey 0.4 s, a gc less.
		var args []string
		var within time.Duration
		switch kill % 3 {
		case 0:
			args, within = []string{"import", "--to", fmt.Sprintf("/memories/i%02d", kill), src}, 500*time.Millisecond
		case 1:
			args, within = []string{"rekey"}, 700*time.Millisecond
		case 2:
			args, within = []string{"gc"}, 50*time.Millisecond
		}
		cmd := exec.Command(p.exe, args...)
		cmd.Env = p.env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(within))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if out, err := exec.Command("git", "--git-dir", p.vault, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
			t.Fatalf("after killing %v: git fsck --strict: %v\n%s", args, err, out)
		}
		// No rekey is run to finish a killed one: every command reads the
		// vault in the state a kill left.
		ctx := context.Background()
		v, err := vault.Open(ctx, p.vault, vault.Options{IdentityFile: p.identity})
		if err != nil {
			t.Fatalf("after killing %v: open: %v", args, err)
		}
		snap, err := v.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := snap.ReadFile(ctx, "/memories/kept.md"); err != nil || string(got) != "kept\n" {
			t.Fatalf("after killing %v: kept.md reads %q, %v", args, got, err)
		}
		if args[0] == "import" {
			es, _ := snap.List(ctx, args[2]+"/d")
			if len(es) != 0 && len(es) != imported {
				t.Fatalf("after killing %v: %d of %d files imported", args, len(es), imported)
			}
			if len(es) == 0 {
				none++
			} else {
				whole++
			}
		}
		if problems, err := v.Fsck(ctx); err != nil || len(problems) > 0 {
			t.Fatalf("after killing %v: fsck = %v, %v", args, problems, err)
		}
		v.Close()
	}
	t.Logf("imports killed: %d there whole, %d not there at all", whole, none)
}
