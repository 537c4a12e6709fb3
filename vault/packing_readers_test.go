package vault_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// The helper processes of TestReaderBesideOtherProcessesPacking read their
// part from these variables.
const (
	packHelperDir     = "MEMVAULT_TEST_PACK_DIR"     // the test's directory
	packHelperRole    = "MEMVAULT_TEST_PACK_ROLE"    // "writer" or "packer"
	packHelperCommits = "MEMVAULT_TEST_PACK_COMMITS" // how many commits the writer makes
)

// TestPackHelperProcess is not a test: it is a writer or a packer process of
// TestReaderBesideOtherProcessesPacking, run by it with packHelperDir set.
func TestPackHelperProcess(t *testing.T) {
	dir := os.Getenv(packHelperDir)
	if dir == "" {
		return
	}
	ctx := context.Background()
	v, err := vault.Open(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close() // waits for an automatic pack the writes started
	switch os.Getenv(packHelperRole) {
	case "writer":
		n, _ := strconv.Atoi(os.Getenv(packHelperCommits))
		for i := range n {
			p := fmt.Sprintf("/memories/d%d/f%d.md", i%7, i%40)
			if err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
				return tx.WriteFile(ctx, p, noteOfSize(i))
			}); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		// Tell the packers to stop: they run until this file exists.
		if err := os.WriteFile(filepath.Join(dir, "written"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	case "packer":
		runs := 0
		for {
			if _, err := os.Stat(filepath.Join(dir, "written")); err == nil && runs > 0 {
				break
			}
			if _, err := v.Pack(ctx); err != nil {
				t.Fatalf("pack run %d: %v", runs+1, err)
			}
			runs++
		}
		fmt.Printf("packer ran %d times\n", runs)
	default:
		t.Fatalf("unknown role %q", os.Getenv(packHelperRole))
	}
}

// noteOfSize is the writer's i-th note, in each size class the storage reads
// another way: a few bytes, and over 16 KiB (go-git reads those from their
// pack only when asked), up to the vault's file size limit.
func noteOfSize(i int) []byte {
	note := fmt.Appendf(nil, "note %d\n", i)
	switch i % 11 {
	case 3, 7:
		return bytes.Repeat(note, (40<<10)/len(note))
	case 10:
		if i%33 == 10 {
			return bytes.Repeat(note, (600<<10)/len(note))
		}
	}
	return note
}

// TestReaderBesideOtherProcessesPacking: one long-lived vault reads the
// history, one file's history, every tree and every file, round after round,
// while other processes write (with automatic packing at a low threshold) and
// run two manual packers at once. Every read succeeds, each round sees at least
// the commits the one before saw, and at the end the reader sees every commit
// (a long-lived MCP server or UI answered "object not found" once
// another process had packed).
func TestReaderBesideOtherProcessesPacking(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _ := vaulttest.NewAt(t, dir)
	repo := filepath.Join(dir, "vault.git")
	if out, err := exec.Command("git", "--git-dir", repo, "config", "gc.auto", "40").CombinedOutput(); err != nil {
		t.Fatalf("git config gc.auto: %v: %s", err, out)
	}
	put(t, v, "/memories/d0/f0.md", "first\n")

	commits := 300
	if testing.Short() {
		commits = 120
	}
	// Each helper is waited for by its own goroutine; a failing test kills
	// what still runs before its directory goes.
	type proc struct {
		log  string
		done chan struct{}
		err  error
	}
	start := func(role string) *proc {
		out, err := os.CreateTemp(dir, role+"-*.log")
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd := exec.Command(os.Args[0], "-test.run=^TestPackHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(), packHelperDir+"="+dir, packHelperRole+"="+role,
			packHelperCommits+"="+strconv.Itoa(commits))
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := &proc{log: out.Name(), done: make(chan struct{})}
		go func() { p.err = cmd.Wait(); close(p.done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-p.done })
		return p
	}
	wait := func(name string, p *proc) {
		t.Helper()
		<-p.done
		if p.err != nil {
			logs, _ := os.ReadFile(p.log)
			t.Fatalf("%s process: %v\n%s", name, p.err, logs)
		}
	}
	writer := start("writer")
	packers := []*proc{start("packer"), start("packer")}

	rounds, seen := 0, 0
	read := func() {
		t.Helper()
		recs, err := v.Log(ctx, vault.LogOptions{})
		if err != nil {
			t.Fatalf("round %d: Log: %v", rounds, err)
		}
		if len(recs) < seen {
			t.Fatalf("round %d: Log has %d commits, fewer than the %d seen before", rounds, len(recs), seen)
		}
		seen = len(recs)
		if _, err := v.Log(ctx, vault.LogOptions{Path: "/memories/d0/f0.md"}); err != nil {
			t.Fatalf("round %d: Log(path): %v", rounds, err)
		}
		snap, err := v.Snapshot(ctx)
		if err != nil {
			t.Fatalf("round %d: Snapshot: %v", rounds, err)
		}
		files, err := snap.Files(ctx)
		if err != nil {
			t.Fatalf("round %d: Files: %v", rounds, err)
		}
		for _, f := range files {
			if _, err := snap.ReadFile(ctx, f); err != nil {
				t.Fatalf("round %d: ReadFile(%s): %v", rounds, f, err)
			}
		}
		rounds++
	}
	deadline := time.After(5 * time.Minute) // bounds only a run that hangs
loop:
	for {
		select {
		case <-writer.done:
			break loop
		case <-deadline:
			t.Fatal("the writer process did not end in 5 minutes")
		default:
			read()
		}
	}
	wait("writer", writer)
	for _, p := range packers {
		wait("packer", p)
	}
	read()
	if want := commits + 2; seen != want { // init, the first put, the writer's commits
		t.Errorf("the reader sees %d commits at the end, want %d", seen, want)
	}
	if rounds < 5 {
		t.Errorf("the reader read only %d rounds beside the writer: the test proves little", rounds)
	}
	loose, inPack, packs := countObjects(t, repo)
	t.Logf("%d read rounds; %d loose objects, %d packed in %d packs", rounds, loose, inPack, packs)
	if inPack == 0 {
		t.Error("nothing was packed: the packers did not run beside the reader")
	}
	problems, err := v.Fsck(ctx)
	if err != nil || len(problems) != 0 {
		t.Errorf("Fsck = %q, %v", problems, err)
	}
}
