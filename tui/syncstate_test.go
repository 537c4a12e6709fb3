package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// The interface could not show or start a sync: the status bar says how far
// each remote is ahead and behind, p syncs with a local remote, and a commit
// made meanwhile shows as one to push until the sync.
func TestSyncStatus(t *testing.T) {
	ctx := context.Background()
	remote, opts := newVault(t)
	seed(t, remote)
	opts.IdentityFile = filepath.Join(filepath.Dir(remote.Dir()), "identity")
	if err := remote.Flush(context.Background()); err != nil { // plain git, the clone, reads what is flushed
		t.Fatal(err)
	}
	v, _, err := vault.Clone(ctx, "file://"+remote.Dir(), filepath.Join(t.TempDir(), "clone.git"), opts, vault.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	d := newDriver(t, v, 120, 30)
	if got := d.m.statusBar(); !strings.Contains(got, "origin ↓0 ↑0") {
		t.Errorf("a fresh clone's status bar is %q, want origin ↓0 ↑0", got)
	}

	write(t, v, vault.Meta{Command: "create", Agent: "claude"}, "/memories/local.md", "here\n")
	d.send(pollMsg{})
	if got := d.m.statusBar(); !strings.Contains(got, "origin ↓0 ↑1") {
		t.Errorf("after a local commit the status bar is %q, want origin ↓0 ↑1", got)
	}
	write(t, remote, vault.Meta{Command: "create", Agent: "claude"}, "/memories/remote.md", "there\n")

	d.keys("p")
	// It once said only "sync: merge".
	if want := "sync: merged with origin, sent back; main is at "; !strings.HasPrefix(d.m.status, want) || d.m.isErr {
		t.Errorf("after p the status says %q, want %q and the commit", d.m.status, want)
	}
	d.keys("j") // a key clears the message, and the bar shows where things stand
	if got := d.m.statusBar(); !strings.Contains(got, "origin ↓0 ↑0 · synced now") {
		t.Errorf("after the sync the status bar is %q, want origin ↓0 ↑0 · synced now", got)
	}
	if readMemory(t, v, "/memories/remote.md") != "there\n" || readMemory(t, remote, "/memories/local.md") != "here\n" {
		t.Errorf("the sync did not bring each side's commit to the other")
	}
}

// A vault without remotes shows nothing of them, and p says how to add one.
func TestSyncNoRemote(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	d := newDriver(t, v, 120, 30)
	d.keys("p")
	if !d.m.isErr || !strings.Contains(d.m.status, "remote add") {
		t.Errorf("p without a remote: status %q, want how to add one", d.m.status)
	}
}

// countStatus counts the reads of the vault's status.
type countStatus struct {
	*vault.Vault
	n *int
}

func (c countStatus) Status(ctx context.Context) (*vault.Status, error) {
	*c.n++
	return c.Vault.Status(ctx)
}

// The status, which may grep every file for conflict markers, is read in a
// command, never in Update, so the interface never waits for it.
func TestSyncStatusOffUpdate(t *testing.T) {
	v, _ := newVault(t)
	seed(t, v)
	n := 0
	d := newDriverFor(t, countStatus{v, &n}, v, 80, 24)
	before := n
	write(t, v, vault.Meta{Command: "create", Agent: "claude"}, "/memories/x.md", "x\n")
	snap, err := v.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, cmd := d.m.Update(headMsg{snap: snap, seq: d.m.headAsked + 1})
	if n != before {
		t.Fatalf("Update read the status itself")
	}
	d.run(cmd)
	if n != before+1 {
		t.Errorf("the head's move led to %d reads of the status, want 1", n-before)
	}
}
