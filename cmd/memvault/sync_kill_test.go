package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// TestSyncKilled kills `memvault sync` with SIGKILL at growing moments of a sync
// that fetches, merges and pushes hundreds of commits. After every kill the vault
// passes fsck; a last sync completes and both vaults agree.
func TestSyncKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	ctx := context.Background()
	root := t.TempDir()
	p := newProcess(t, root)
	p.run(t, "", "init")
	remote := filepath.Join(root, "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	p.run(t, "", "remote", "add", "origin", "file://"+remote)
	p.run(t, "", "sync")
	opts := vault.Options{IdentityFile: p.identity}
	other, _, err := vault.Clone(ctx, "file://"+remote, filepath.Join(root, "other.git"), opts, vault.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	mine, err := vault.Open(ctx, p.vault, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		for _, v := range []*vault.Vault{mine, other} {
			err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
				return tx.WriteFile(ctx, fmt.Sprintf("/memories/%p/%d.md", v, i%40), fmt.Appendf(nil, "%d\n", i))
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	mine.Close()
	if _, err := other.Sync(ctx, vault.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	var interrupted []time.Duration // kills that landed before the sync ended
	for wait := 2 * time.Millisecond; wait < 2*time.Second; wait *= 2 {
		cmd := exec.Command(p.exe, "sync")
		cmd.Env = p.env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
		cmd.Process.Signal(syscall.SIGKILL)
		// Only the kill counts as an interruption: a sync that failed on its
		// own, with an exit status, is a failure of the test.
		err := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
			interrupted = append(interrupted, wait)
		case err != nil:
			t.Fatalf("memvault sync, to be killed after %v, ended otherwise: %v", wait, err)
		}
		if out := p.run(t, "", "fsck"); !strings.HasPrefix(withoutNotes(out), "ok") {
			t.Fatalf("fsck after killing sync at %v: %q", wait, out)
		}
	}
	if len(interrupted) < 2 {
		t.Fatalf("only the kills after %v interrupted a sync: the test proves little", interrupted)
	}
	t.Logf("kills after %v interrupted a sync", interrupted)
	p.run(t, "", "sync")
	if _, err := other.Sync(ctx, vault.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	s, _ := other.Snapshot(ctx)
	if got := p.run(t, "", "log", "-n", "1", "--json"); !strings.Contains(got, s.Commit()) {
		t.Errorf("after the last syncs, log -n 1 = %q, want the other vault's head %s", got, s.Commit())
	}
}
