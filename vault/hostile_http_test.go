package vault_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// TestHostileRemoteHTTP is the hostile-remote suite over git http-backend on
// loopback: each hostile push is refused through a fast-forward, a merge and a
// clone; after each, a listing, fsck and a later sync stay usable, and
// SkipRefused (Clone with SkipRefused) is the way forward. -short runs a few cases.
func TestHostileRemoteHTTP(t *testing.T) {
	short := map[string]bool{"plaintext": true, "too big": true}
	for _, tc := range hostileCases() {
		if testing.Short() && !short[tc.name] {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			url := gittest.HTTP(t, "", "")
			a, b, opts := hostilePair(t, url)
			write(t, a, "/memories/keep.md", "kept\n")
			mustSync(t, a)
			mustSync(t, b)
			h := gittest.NewHostile(t, url)
			h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
			h.Push(h.Commit(tc.change(h), "hostile\n", h.Head()))

			// Fast-forward: b has nothing of its own.
			before := head(t, b)
			if _, err := b.Sync(ctx, vault.SyncOptions{Host: "b"}); !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("fast-forward: Sync = %v, want ErrRefused", err)
			}
			if got := head(t, b); got != before {
				t.Fatalf("fast-forward: head moved from %s to %s", before, got)
			}
			usable(t, "after the refused fast-forward", b)

			// Merge: a has a change of its own.
			write(t, a, "/memories/a.md", "a\n")
			before = head(t, a)
			if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a"}); !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("merge: Sync = %v, want ErrRefused", err)
			}
			if got := head(t, a); got != before {
				t.Fatalf("merge: head moved from %s to %s", before, got)
			}
			usable(t, "after the refused merge", a)
			if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a", SkipRefused: true}); err != nil {
				t.Fatalf("merge: Sync(SkipRefused) = %v", err)
			}
			usable(t, "after the merge that left it out", a)
			if _, err := b.Sync(ctx, vault.SyncOptions{Host: "b", SkipRefused: true}); err != nil {
				t.Fatalf("b: Sync(SkipRefused) = %v", err)
			}
			// Later syncs, both ways, are plain again.
			write(t, b, "/memories/b.md", "b\n")
			mustSync(t, b)
			mustSync(t, a)
			if got, err := read(t, a, "/memories/b.md"); err != nil || got != "b\n" {
				t.Errorf("a: b.md after later syncs = %q, %v", got, err)
			}
			usable(t, "after later syncs", a)

			// Clone: refused, then cloned past the refused entries.
			dir := filepath.Join(t.TempDir(), "c.git")
			if _, _, err := vault.Clone(ctx, url, dir, opts, vault.CloneOptions{}); !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("Clone = %v, want ErrRefused", err)
			}
			c, _, err := vault.Clone(ctx, url, dir, opts, vault.CloneOptions{SkipRefused: true})
			if err != nil {
				t.Fatalf("Clone with SkipRefused = %v", err)
			}
			defer c.Close()
			usable(t, "the clone", c)
			write(t, c, "/memories/c.md", "c\n")
			mustSync(t, c)
			mustSync(t, a)
			if got, err := read(t, a, "/memories/c.md"); err != nil || got != "c\n" {
				t.Errorf("a: c.md from the clone = %q, %v", got, err)
			}
		})
	}
}

// usable checks that v lists /memories without a bad entry and fscks clean.
func usable(t *testing.T, when string, v *vault.Vault) {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatalf("%s: Snapshot: %v", when, err)
	}
	es, err := s.List(ctx, "/memories")
	if err != nil {
		t.Errorf("%s: List(/memories) = %v", when, err)
	}
	for _, e := range es {
		if e.Err != nil {
			t.Errorf("%s: List(/memories) holds a bad entry: %+v", when, e)
		}
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) > 0 {
		t.Errorf("%s: Fsck = %q, %v; want nothing", when, problems, err)
	}
}
