//go:build linux

package mount_test

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// lockedBuffer is a log the mount's goroutines write while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMountSecretPolicy: a file written through the folder meets the vault's
// secret policy as a memory tool write does. Files written there skipped it
// before, so an agent keeping memory in a folder stored keys the policy says
// to refuse or redact. Under reject the close fails with EACCES and nothing is
// committed; under redact the vault, and the folder, hold the text with the
// key replaced; under warn it is stored and the mount's log says so. A rename
// to a name holding a key is refused under reject and redact. The log never
// quotes the key.
func TestMountSecretPolicy(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE" // the example access key id in AWS's documentation
	for _, policy := range []string{"reject", "redact", "warn"} {
		t.Run(policy, func(t *testing.T) {
			v := vaulttest.New(t)
			var log lockedBuffer
			m := mountVault(t, v, mount.Options{Screen: agent.ImportScreen(vault.Limits{SecretPolicy: policy}), Log: &log})
			dir := m.Dir()

			err := os.WriteFile(dir+"/keys.md", []byte("aws "+key+"\n"), 0o600)
			stored, rerr := readVault(t, v, "/memories/keys.md")
			shown, _ := os.ReadFile(dir + "/keys.md")
			switch policy {
			case "reject":
				if !errors.Is(err, syscall.EACCES) || !errors.Is(rerr, vault.ErrNotExist) {
					t.Errorf("write of a key: %v, vault holds %q (%v); want EACCES and nothing stored", err, stored, rerr)
				}
				if n := strings.Count(log.String(), "keys.md: not written"); n != 1 {
					t.Errorf("log %q says %d times that the file was not written, want once", log.String(), n)
				}
				// Put right, it is saved.
				if err := os.WriteFile(dir+"/keys.md", []byte("aws (ask ops)\n"), 0o600); err != nil {
					t.Errorf("write without the key after a refusal: %v", err)
				}
				if got, _ := readVault(t, v, "/memories/keys.md"); got != "aws (ask ops)\n" {
					t.Errorf("vault holds %q after the file was put right", got)
				}
			case "redact":
				want := "aws [REDACTED:AWS access key id]\n"
				if err != nil || stored != want || string(shown) != want {
					t.Errorf("write of a key: %v, vault holds %q, folder shows %q; want %q in both", err, stored, shown, want)
				}
			case "warn":
				if err != nil || stored != "aws "+key+"\n" || !strings.Contains(log.String(), "looks like it holds secrets") {
					t.Errorf("write of a key: %v, vault holds %q, log %q; want it stored with a warning", err, stored, log.String())
				}
			}

			if err := os.WriteFile(dir+"/clean.md", []byte("clean\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			err = os.Rename(dir+"/clean.md", dir+"/"+key+".md")
			_, rerr = readVault(t, v, "/memories/clean.md")
			if policy == "warn" {
				if err != nil || !errors.Is(rerr, vault.ErrNotExist) {
					t.Errorf("rename to a key's name under warn: %v (clean.md: %v); want it done", err, rerr)
				}
			} else if !errors.Is(err, syscall.EACCES) || rerr != nil {
				t.Errorf("rename to a key's name: %v (clean.md: %v); want EACCES and clean.md kept", err, rerr)
			}
			if strings.Contains(log.String(), key) {
				t.Errorf("the mount's log quotes the key: %q", log.String())
			}
		})
	}
}
