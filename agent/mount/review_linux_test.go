package mount_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var _ mount.Store = (*vault.AgentStore)(nil)

// TestMountReadOnly: a read-only mount reads as ever, and every write fails
// with EROFS, changing nothing.
func TestMountReadOnly(t *testing.T) {
	v := vaulttest.New(t)
	vaulttest.Write(t, v, "/memories/a.md", []byte("a\n"))
	head, _ := v.Head()
	m := mountVault(t, v.Agent(vault.AgentOptions{}), mount.Options{ReadOnly: true})
	if b, err := os.ReadFile(filepath.Join(m.Dir(), "a.md")); err != nil || string(b) != "a\n" {
		t.Errorf("read = %q, %v", b, err)
	}
	for what, err := range map[string]error{
		"write":  os.WriteFile(filepath.Join(m.Dir(), "b.md"), []byte("b"), 0o600),
		"remove": os.Remove(filepath.Join(m.Dir(), "a.md")),
		"mkdir":  os.Mkdir(filepath.Join(m.Dir(), "d"), 0o700),
		"rename": os.Rename(filepath.Join(m.Dir(), "a.md"), filepath.Join(m.Dir(), "c.md")),
	} {
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s on a read-only mount = %v, want EROFS", what, err)
		}
	}
	if now, _ := v.Head(); now != head {
		t.Errorf("a read-only mount moved main")
	}
}

// TestMountReview: in review mode the folder shows what the agent wrote,
// which waits on the review line; main does not hold it.
func TestMountReview(t *testing.T) {
	v := vaulttest.New(t)
	m := mountVault(t, v.Agent(vault.AgentOptions{Review: true}), mount.Options{})
	p := filepath.Join(m.Dir(), "notes.md")
	if err := os.WriteFile(p, []byte("pending\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "pending\n" {
		t.Errorf("the folder reads %q, %v; want what was written", b, err)
	}
	if got, err := readVault(t, v, "/memories/notes.md"); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("main holds %q, %v", got, err)
	}
	ps, err := v.Review(context.Background(), vault.ReviewOptions{})
	if err != nil || len(ps) != 1 || ps[0].Path != "/memories/notes.md" {
		t.Fatalf("Review = %+v, %v", ps, err)
	}
}

// TestMountMassDeletionHeld: rm -rf of a folder of seven files deletes five;
// the sixth and seventh fail with EACCES and wait for a person, and the log
// says how to approve them.
func TestMountMassDeletionHeld(t *testing.T) {
	v := vaulttest.New(t)
	for i := range 7 {
		vaulttest.Write(t, v, fmt.Sprintf("/memories/old/%d.md", i), []byte("x\n"))
	}
	for i := range 20 {
		vaulttest.Write(t, v, fmt.Sprintf("/memories/keep/%d.md", i), []byte("x\n"))
	}
	var log lockedBuffer
	m := mountVault(t, v.Agent(vault.AgentOptions{}), mount.Options{Log: &log})
	out, err := exec.Command("rm", "-rf", filepath.Join(m.Dir(), "old")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("rm -rf of 7 files = %v, %s; want it refused past five", err, out)
	}
	snap, err := v.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	es, err := snap.List(context.Background(), "/memories/old")
	if err != nil || len(es) != 2 {
		t.Errorf("main's /memories/old holds %d files, %v; want the 2 held", len(es), err)
	}
	if !strings.Contains(log.String(), "it waits for a person (memvault review approve ") {
		t.Errorf("the log does not say how to approve:\n%s", log.String())
	}
	ps, err := v.Review(context.Background(), vault.ReviewOptions{})
	if err != nil || len(ps) == 0 || ps[0].Held == "" {
		t.Errorf("Review = %+v, %v; want the held deletions", ps, err)
	}
}
