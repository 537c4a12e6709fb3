package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// TestKillSeal kills `memvault seal` with SIGKILL at random moments of its run,
// on a plain vault of 300 files, 8 times (3 under the race detector). After
// each kill git fsck --strict passes before memvault opens the vault, and the
// vault is either plain as it was or sealed whole: every file reads, in its
// one format, and memvault's fsck is clean. A seal run after a kill finishes
// the conversion.
func TestKillSeal(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 8 processes")
	}
	const files = 300
	rng := rand.New(rand.NewPCG(13, 17))
	kills := 8
	if raceEnabled {
		kills = 3
	}
	outcomes := map[string]int{}
	for kill := range kills {
		root := t.TempDir()
		p := newProcess(t, root)
		p.run(t, "", "init", "--plain")
		src := filepath.Join(root, "import", "d")
		if err := os.MkdirAll(src, 0o700); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%03d.md", i)), []byte(crashContent(fmt.Sprint(i))), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		p.run(t, "", "import", "--to", "/memories/i", filepath.Dir(src))
		if tree := gitTree(t, p); strings.Contains(tree, ".memvault/key") {
			t.Fatalf("init made a sealed vault; this test converts a plain one")
		}
		// A seal of 300 files takes about 0.3 s here; the kill lands
		// anywhere in it, start-up included.
		cmd := exec.Command(p.exe, "seal")
		cmd.Env = p.env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(600 * time.Millisecond))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if out, err := exec.Command("git", "--git-dir", p.vault, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
			t.Fatalf("after kill %d: git fsck --strict: %v\n%s", kill, err, out)
		}
		// What memvault acknowledged may still be in its journal only, ahead
		// of the branch git reads: a flush brings git up to it.
		flushVault(t, p)
		sealed := strings.Contains(gitTree(t, p), ".memvault/key")
		if sealed {
			outcomes["sealed"]++
		} else {
			outcomes["plain"]++
		}
		checkAllFiles(t, p, kill, files, sealed)
		if !sealed {
			if out := p.run(t, "", "seal"); !strings.HasPrefix(out, fmt.Sprintf("sealed %d memory files", files)) {
				t.Fatalf("after kill %d: seal = %q", kill, out)
			}
			flushVault(t, p)
			checkAllFiles(t, p, kill, files, true)
		}
	}
	t.Logf("seal killed: %v", outcomes)
}

func flushVault(t *testing.T, p *process) {
	t.Helper()
	ctx := context.Background()
	v, err := vault.Open(ctx, p.vault, vault.Options{IdentityFile: p.identity})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer v.Close()
	if err := v.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

func gitTree(t *testing.T, p *process) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", p.vault, "ls-tree", "-r", "--name-only", "main").Output()
	if err != nil {
		t.Fatalf("git ls-tree: %v", err)
	}
	return string(out)
}

// checkAllFiles opens the vault as a kill left it and reads every file.
func checkAllFiles(t *testing.T, p *process, kill, files int, sealed bool) {
	t.Helper()
	if tree := gitTree(t, p); strings.Contains(tree, "memories/i/d/") == sealed {
		t.Fatalf("after kill %d: a tree both plain and sealed:\n%s", kill, tree)
	}
	ctx := context.Background()
	v, err := vault.Open(ctx, p.vault, vault.Options{IdentityFile: p.identity})
	if err != nil {
		t.Fatalf("after kill %d: open: %v", kill, err)
	}
	defer v.Close()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		got, err := snap.ReadFile(ctx, fmt.Sprintf("/memories/i/d/f%03d.md", i))
		if err != nil || string(got) != crashContent(fmt.Sprint(i)) {
			t.Fatalf("after kill %d: f%03d.md reads %q, %v", kill, i, got, err)
		}
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("after kill %d: fsck = %v, %v", kill, problems, err)
	}
}
