//go:build unix

package gitlog

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/gitlog/internal/journal"
)

// TestLocalRemoteJournalFIFO: a local-path remote whose memvault/journal is
// a FIFO once hung a fetch past its timeout and SIGTERM, in the open of the
// journal. The fetch fails at once, saying the journal is no regular file.
func TestLocalRemoteJournalFIFO(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command(gittest.Git(t), "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(remote, stateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(remote, stateDir, journal.Name), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddRemote("origin", remote); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := r.Fetch(ctx, "origin", TransferOptions{}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Fetch from a remote whose journal is a FIFO = %v, want it refused: not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Fetch from a remote whose journal is a FIFO still hangs after 10 s")
	}
}
