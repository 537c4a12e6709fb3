package vault_test

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// TestSyncSideClockSkew: the merge reads a side with merges by a
// walk that stops where the base's history begins, told by commit times. Below
// the base lie a commit dated in the future that renamed x.md to y.md, and one
// dated in the past; the other side's merge reaches the old commits sooner
// than the base's walk does. The old rename must not be taken for one on the
// side: both sides' edits of the new x.md merge cleanly, line by line.
func TestSyncSideClockSkew(t *testing.T) {
	var at atomic.Int64 // the commit time, in seconds
	epoch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := vault.Options{IdentityFile: filepath.Join(t.TempDir(), "identity"),
		Now: func() time.Time { return epoch.Add(time.Duration(at.Load()) * time.Second) }}
	dir := t.TempDir()
	url := fileRemote(t)
	set := func(s int64) { at.Store(s) }

	set(100)
	a, _, err := vault.Init(ctx, filepath.Join(dir, "a.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	set(101)
	write(t, a, "/memories/x.md", "old\n")
	set(10_000) // in the future
	rename(t, a, "/memories/x.md", "/memories/y.md")
	set(201)
	write(t, a, "/memories/x.md", "1\n2\n3\n4\n5\n")
	if err := a.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	b, _, err := vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	set(50) // in the past
	write(t, a, "/memories/a0.md", "a0\n")
	set(301)
	write(t, a, "/memories/a1.md", "a1\n")
	mustSync(t, a)
	set(300)
	write(t, b, "/memories/b1.md", "b1\n")
	set(302)
	if res := mustSync(t, b); res.Action != "merge" {
		t.Fatalf("b's sync = %+v, want a merge", res)
	}
	set(303)
	write(t, a, "/memories/x.md", "1 by a\n2\n3\n4\n5\n")
	set(304)
	write(t, b, "/memories/x.md", "1\n2\n3\n4\n5 by b\n")
	mustSync(t, b)
	set(305)
	res := mustSync(t, a)
	if res.Action != "merge" || len(res.Conflicts) > 0 {
		t.Errorf("a's sync = %+v, want a clean merge", res)
	}
	if got, err := read(t, a, "/memories/x.md"); err != nil || got != "1 by a\n2\n3\n4\n5 by b\n" {
		t.Errorf("x.md after the merge = %q, %v; want both edits", got, err)
	}
	if got, err := read(t, a, "/memories/y.md"); err != nil || got != "old\n" {
		t.Errorf("y.md after the merge = %q, %v; want %q", got, err, "old\n")
	}
}
