package vault_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// pair is vaulttest.Pair without the options.
func pair(t *testing.T, url string) (a, b *vault.Vault) {
	t.Helper()
	a, b, _ = vaulttest.Pair(t, url)
	return a, b
}

// clock is a fake time for commits: each reading is step after the last, so a
// run repeats exactly. Below a second, many commits share a second (git's unit),
// as when an agent writes quickly.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newClock(step time.Duration) *clock {
	return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: step}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// pairAt is pair with commit times from c.
func pairAt(t *testing.T, url string, c *clock) (a, b *vault.Vault) {
	t.Helper()
	return pairIn(t, url, c, true)
}

// pairIn is pairAt, the first vault in the sealed format when sealed, else
// in the plain one.
func pairIn(t *testing.T, url string, c *clock, sealed bool) (a, b *vault.Vault) {
	t.Helper()
	dir := t.TempDir()
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Now: c.now, Plain: !sealed}
	a, _, err := vault.Init(ctx, filepath.Join(dir, "a.git"), opts)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.AddRemote("origin", url); err != nil {
		t.Fatalf("AddRemote: %v", err)
	}
	mustSync(t, a)
	if b, _, err = vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{}); err != nil {
		t.Fatalf("Clone(%s): %v", url, err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

func mustSync(t *testing.T, v *vault.Vault) vault.SyncResult { return vaulttest.MustSync(t, v) }

func head(t *testing.T, v *vault.Vault) string {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s.Commit()
}

func rename(t *testing.T, v *vault.Vault, from, to string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "rename"}, func(tx *vault.Tx) error { return tx.Rename(from, to) })
	if err != nil {
		t.Fatalf("rename %s: %v", from, err)
	}
}

func remove(t *testing.T, v *vault.Vault, p string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "delete"}, func(tx *vault.Tx) error { return tx.Remove(p) })
	if err != nil {
		t.Fatalf("delete %s: %v", p, err)
	}
}

// TestSyncTransports runs a push, a fast-forward and a clean merge through each
// transport against a real server on loopback.
func TestSyncTransports(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remote func(testing.TB) string
	}{
		{"file", fileRemote},
		{"git-daemon", daemonRemote},
		{"http-backend", httpRemote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.remote(t)
			a, b := pair(t, url)
			write(t, a, "/memories/a.md", "one\ntwo\nthree\nfour\nfive\n")
			if res := mustSync(t, a); res.Action != "push" || !res.Pushed {
				t.Errorf("Sync after a write = %+v, want a push", res)
			}
			if res := mustSync(t, b); res.Action != "fast-forward" {
				t.Errorf("Sync of the behind clone = %+v, want fast-forward", res)
			}
			write(t, a, "/memories/a.md", "ONE\ntwo\nthree\nfour\nfive\n")
			write(t, b, "/memories/a.md", "one\ntwo\nthree\nfour\nFIVE\n")
			mustSync(t, a)
			res := mustSync(t, b)
			if res.Action != "merge" || len(res.Conflicts) != 0 || !res.Pushed {
				t.Errorf("Sync of diverged vaults = %+v, want a clean pushed merge", res)
			}
			mustSync(t, a)
			for _, v := range []*vault.Vault{a, b} {
				if got, _ := read(t, v, "/memories/a.md"); got != "ONE\ntwo\nthree\nfour\nFIVE\n" {
					t.Errorf("after the merge a.md = %q", got)
				}
			}
			if head(t, a) != head(t, b) {
				t.Errorf("heads differ after syncing both ways: %s, %s", head(t, a), head(t, b))
			}
		})
	}
}

// TestSyncMergeCases covers the path-level rules of a merge on plaintext.
func TestSyncMergeCases(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	write(t, a, "/memories/same.md", "x\n")
	write(t, a, "/memories/delmod.md", "keep\n")
	write(t, a, "/memories/moddel.md", "keep\n")
	write(t, a, "/memories/ren.md", "l1\nl2\nl3\n")
	mustSync(t, a)
	mustSync(t, b)

	write(t, a, "/memories/same.md", "from a\n")
	write(t, b, "/memories/same.md", "from b\n")
	remove(t, a, "/memories/delmod.md")
	write(t, b, "/memories/delmod.md", "keep\nmore from b\n")
	write(t, a, "/memories/moddel.md", "keep\nmore from a\n")
	remove(t, b, "/memories/moddel.md")
	rename(t, a, "/memories/ren.md", "/memories/moved/ren.md")
	write(t, b, "/memories/ren.md", "l1\nl2 from b\nl3\n")
	write(t, a, "/memories/new.md", "a line\n")
	write(t, b, "/memories/new.md", "b line\n")
	mustSync(t, a)
	res := mustSync(t, b)
	mustSync(t, a)
	if head(t, a) != head(t, b) {
		t.Fatalf("heads differ after syncing both ways")
	}
	want := []string{"/memories/new.md", "/memories/same.md"}
	if strings.Join(res.Conflicts, ",") != strings.Join(want, ",") {
		t.Errorf("Conflicts = %v, want %v", res.Conflicts, want)
	}
	got, _ := read(t, a, "/memories/same.md")
	if !strings.Contains(got, "<<<<<<< ours (test, ") || !strings.Contains(got, "from a\n") ||
		!strings.Contains(got, "from b\n") || !strings.Contains(got, ">>>>>>> theirs (origin, ") {
		t.Errorf("same.md = %q, want both sides between markers", got)
	}
	if got, err := read(t, a, "/memories/delmod.md"); err != nil || got != "keep\nmore from b\n" {
		t.Errorf("delete vs modify: delmod.md = %q, %v; want the modified file", got, err)
	}
	if got, err := read(t, a, "/memories/moddel.md"); err != nil || got != "keep\nmore from a\n" {
		t.Errorf("modify vs delete: moddel.md = %q, %v; want the modified file", got, err)
	}
	if got, err := read(t, a, "/memories/moved/ren.md"); err != nil || got != "l1\nl2 from b\nl3\n" {
		t.Errorf("rename vs modify: moved/ren.md = %q, %v; want the edit at the new path", got, err)
	}
	if _, err := read(t, a, "/memories/ren.md"); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("rename vs modify: the old path still exists (err %v)", err)
	}
	recs, err := b.Log(ctx, vault.LogOptions{Limit: 1})
	if err != nil || len(recs) != 1 || recs[0].Command != "merge" || len(recs[0].Parents) != 2 {
		t.Errorf("Log(Limit 1) = %+v, %v; want the merge commit with two parents", recs, err)
	}
}
