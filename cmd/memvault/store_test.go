package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/memstoreapi/memstoreapitest"
)

// A memory store as a remote, end to end through the command line: import
// its history, add it as a remote, sync both ways, and the doors that do not
// speak to a store say so.
func TestStoreRemoteCLI(t *testing.T) {
	s := memstoreapitest.New(t)
	s.Write("/notes.md", "from the store\n", memstoreapitest.Session("sesn_cli"))
	p := newProcess(t, t.TempDir())
	p.env = append(p.env, "ANTHROPIC_BASE_URL="+s.URL, "ANTHROPIC_API_KEY=sk-test")
	url := "memory-store:" + s.Store

	if out := p.run(t, "", "import", url); !strings.Contains(out, "1 versions pulled") {
		t.Errorf("import: %q", out)
	}
	if out := p.run(t, "", "cat", "/memories/notes.md"); out != "from the store\n" {
		t.Errorf("cat after import: %q", out)
	}
	if out := p.run(t, "", "log", "--json"); !strings.Contains(out, `"agent":"session sesn_cli"`) ||
		!strings.Contains(out, `"origin":"`+url+` memver_`) {
		t.Errorf("log does not name the store's actor:\n%s", out)
	}
	p.run(t, "", "remote", "add", "team", url)
	p.tool(t, map[string]any{"command": "create", "path": "/memories/mine.md", "file_text": "from the vault\n"})
	if out := p.run(t, "", "sync", "team"); !strings.Contains(out, "0 versions pulled, 1 changes pushed") {
		t.Errorf("sync: %q", out)
	}
	if got := s.Files()["/mine.md"]; got != "from the vault\n" {
		t.Errorf("the store holds %q", got)
	}
	// sync --watch keeps both sides in step: a write in the store comes in,
	// a write here goes out, until SIGTERM.
	watch := exec.Command(p.exe, "sync", "--watch", "--every", "200ms", "team")
	watch.Env = p.env
	var log strings.Builder
	watch.Stderr = &log
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	s.Write("/from-agent.md", "written in the store\n", memstoreapitest.Session("sesn_watch"))
	p.tool(t, map[string]any{"command": "create", "path": "/memories/from-here.md", "file_text": "written here\n"})
	deadline := time.Now().Add(30 * time.Second)
	arrived := func() bool {
		cat := exec.Command(p.exe, "cat", "/memories/from-agent.md")
		cat.Env = p.env
		out, err := cat.Output()
		return err == nil && string(out) == "written in the store\n"
	}
	for s.Files()["/from-here.md"] == "" || !arrived() {
		if time.Now().After(deadline) {
			t.Fatalf("sync --watch did not bring both writes across in 30 s; its log:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	watch.Process.Signal(syscall.SIGTERM)
	if err := watch.Wait(); err != nil {
		t.Errorf("sync --watch after SIGTERM: %v\n%s", err, log.String())
	}
	if out := p.run(t, "", "cat", "/memories/from-agent.md"); out != "written in the store\n" {
		t.Errorf("the store's write, here: %q", out)
	}
	for _, args := range [][]string{{"push", "team"}, {"clone", url}} {
		cmd := exec.Command(p.exe, args...)
		cmd.Env = p.env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "is a memory store") {
			t.Errorf("memvault %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
