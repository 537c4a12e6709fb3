package vault_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// holdLock takes v's writer lock, through another opening of the same vault (as
// another process would) when apart, else through v itself (as another
// goroutine would), and keeps it until the test ends or release is called.
func holdLock(t *testing.T, v *vault.Vault, apart bool) (release func()) {
	t.Helper()
	other := v
	if apart {
		var err error
		if other, err = vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: v.IdentityFile()}); err != nil {
			t.Fatal(err)
		}
	}
	held, done, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		other.Update(ctx, vault.Meta{Command: "hold"}, func(*vault.Tx) error {
			close(held)
			<-stop
			return errors.New("held only")
		})
	}()
	<-held
	var released bool
	release = func() {
		if !released {
			released = true
			close(stop)
			<-done
			if apart {
				other.Close()
			}
		}
	}
	t.Cleanup(release)
	return release
}

// TestSyncDeadline: a deadline that passes while a sync waits for
// the vault's lock, in the fetch or in the merge, fails the sync with an error
// wrapping vault.ErrTimeout, as one in a transfer does, and moves nothing;
// whether the lock is held by another process or by another goroutine.
func TestSyncDeadline(t *testing.T) {
	for _, tc := range []struct {
		step  string
		apart bool
	}{{"fetch", true}, {"merge", true}, {"fetch", false}, {"merge", false}} {
		step := tc.step
		name := step + ", lock held by another process"
		if !tc.apart {
			name = step + ", lock held by another goroutine"
		}
		t.Run(name, func(t *testing.T) {
			a, b := pair(t, fileRemote(t))
			write(t, b, "/memories/b.md", "from b\n")
			mustSync(t, b)
			write(t, a, "/memories/a.md", "from a\n")
			if step == "merge" {
				// git itself fetches b's commit, so Sync's fetch finds the
				// remote where it was and takes no lock: the first wait for
				// the lock is the merge commit's.
				if err := a.Flush(context.Background()); err != nil { // for git to see a's objects
					t.Fatal(err)
				}
				if out, err := exec.Command("git", "--git-dir", a.Dir(), "fetch", "-q", "origin",
					"+refs/heads/main:refs/remotes/origin/main").CombinedOutput(); err != nil {
					t.Fatalf("git fetch: %v\n%s", err, out)
				}
			}
			before := head(t, a)
			release := holdLock(t, a, tc.apart)
			dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, err := a.Sync(dctx, vault.SyncOptions{Host: "test"})
			if !errors.Is(err, vault.ErrTimeout) || !strings.Contains(err.Error(), "lock") {
				t.Fatalf("Sync with the lock held past its deadline = %v, want an error wrapping ErrTimeout from the lock wait", err)
			}
			release()
			if got := head(t, a); got != before {
				t.Errorf("a timed-out sync moved the branch from %s to %s", before, got)
			}
			if res := mustSync(t, a); res.Action != "merge" {
				t.Errorf("the sync after = %+v, want the merge the timed-out one would have made", res)
			}
		})
	}
}
