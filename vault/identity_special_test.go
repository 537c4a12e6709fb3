//go:build unix

package vault_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// TestIdentityNotRegular: an identity path that is a FIFO, a
// directory or a device is refused at once with a clear error. Opening a FIFO
// that has no writer used to block the command for good.
func TestIdentityNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tests := []struct{ name, path, kind string }{
		{"fifo", fifo, "a named pipe (FIFO)"},
		{"directory", dir, "a directory"},
		{"device", os.DevNull, "a device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := keys.ReadIdentity(tt.path, nil)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, vault.ErrNoIdentity) || !strings.Contains(err.Error(), tt.kind+", not a regular file") {
					t.Errorf("ReadIdentity(%s) = %v, want ErrNoIdentity saying it is %s, not a regular file", tt.name, err, tt.kind)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadIdentity(%s) still blocks after 10s", tt.name)
			}
		})
	}
}
