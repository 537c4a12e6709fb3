package vault_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault/vaulttest"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// TestSyncSkipRefused checks the way forward: a vault is never stuck for
// good because of one bad push. After a refusal, sync with SkipRefused merges
// everything good (a's own new file, b's, the remote's), leaves the refused
// entry out, names it in the merge's trailers; the push puts a clean head on
// the remote, which a later plain sync takes, and fsck is clean afterwards.
func TestSyncSkipRefused(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			url := gittest.Bare(t, t.TempDir(), "remote")
			a, b, opts := hostilePair(t, url)
			write(t, a, "/memories/x/keep.md", "kept\n")
			mustSync(t, a)
			mustSync(t, b)
			h := gittest.NewHostile(t, url)
			h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
			bad := h.Commit(tc.change(h), "hostile\n", h.Head())
			h.Push(bad)
			// Some changes delete x/ on the way (a legitimate change, which the
			// merge takes).
			keeps := h.Git("ls-tree", bad, "memories/x/keep.md") != ""

			write(t, a, "/memories/good-a.md", "from a\n")
			if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a"}); !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("Sync = %v, want ErrRefused", err)
			}
			res, err := a.Sync(ctx, vault.SyncOptions{Host: "a", SkipRefused: true})
			if err != nil {
				t.Fatalf("Sync(SkipRefused) = %v", err)
			}
			if res.Action != "merge" || !res.Pushed || len(res.LeftOut) == 0 || res.LeftOut[0].Commit.String() != bad || !strings.Contains(res.LeftOut[0].Reason, tc.reason) {
				t.Fatalf("Sync(SkipRefused) = %+v, want a pushed merge that left out commit %s's entry (%s)", res, bad, tc.reason)
			}
			if msg := vaulttest.HeadMessage(t, a); !strings.Contains(msg, "Memory-Left-Out: "+bad) {
				t.Errorf("merge message %q names no Memory-Left-Out of %s", msg, bad)
			}

			// b has its own change; it is refused too, then merges the same way.
			write(t, b, "/memories/good-b.md", "from b\n")
			if _, err := b.Sync(ctx, vault.SyncOptions{Host: "b"}); !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("b: Sync = %v, want ErrRefused", err)
			}
			if _, err := b.Sync(ctx, vault.SyncOptions{Host: "b", SkipRefused: true}); err != nil {
				t.Fatalf("b: Sync(SkipRefused) = %v", err)
			}
			// a's history already holds the refused commit: a plain sync takes b's merge.
			mustSync(t, a)
			for _, v := range []*vault.Vault{a, b} {
				for p, want := range map[string]string{"/memories/x/keep.md": "kept\n", "/memories/good-a.md": "from a\n", "/memories/good-b.md": "from b\n"} {
					if p == "/memories/x/keep.md" && !keeps {
						continue
					}
					if got, err := read(t, v, p); err != nil || got != want {
						t.Errorf("%s = %q, %v; want %q", p, got, err, want)
					}
				}
				s, _ := v.Snapshot(ctx)
				es, err := s.List(ctx, "/memories")
				if err != nil {
					t.Errorf("List(/memories) = %v", err)
				}
				for _, e := range es {
					if e.Err != nil {
						t.Errorf("List(/memories) holds a bad entry after the merge: %+v", e)
					}
				}
				problems, err := v.Fsck(ctx)
				if err != nil || len(problems) > 0 {
					t.Errorf("Fsck = %q, %v; want nothing", problems, err)
				}
			}
			// A new clone of the remote is refused (the history holds the
			// commit), and clones with Clone with SkipRefused: the remote's head, whose
			// merge already names what it left out, so nothing more is.
			dir := filepath.Join(t.TempDir(), "c.git")
			if _, _, err := vault.Clone(ctx, url, dir, opts, vault.CloneOptions{}); !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("Clone = %v, want ErrRefused", err)
			}
			c, left, err := vault.Clone(ctx, url, dir, opts, vault.CloneOptions{SkipRefused: true})
			if err != nil {
				t.Fatalf("Clone with SkipRefused = %v", err)
			}
			defer c.Close()
			if len(left) != 0 {
				t.Errorf("Clone with SkipRefused left out %v, which the remote's merge names already", left)
			}
			if got, err := read(t, c, "/memories/good-b.md"); err != nil || got != "from b\n" {
				t.Errorf("clone: good-b.md = %q, %v", got, err)
			}
			if problems, err := c.Fsck(ctx); err != nil || len(problems) > 0 {
				t.Errorf("clone: Fsck = %q, %v; want nothing", problems, err)
			}
		})
	}
}

// TestFsckChecksHistory: fsck of a vault changed by hand names each entry
// admission would refuse, with its commit and path; LeaveOutRefused (fsck
// --repair) leaves them out of the tree in one commit, and fsck is clean.
func TestFsckChecksHistory(t *testing.T) {
	for _, c := range damageCases() {
		t.Run(c.name, func(t *testing.T) {
			v, _ := damaged(t, c)
			bad := head(t, v)
			problems, err := v.Fsck(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range problems {
				if strings.HasPrefix(p, "commit "+bad+": ") && strings.Contains(p, `"memories`) {
					found = true
				}
			}
			if !found {
				t.Fatalf("Fsck = %q, want a line naming commit %s and the entry", problems, bad)
			}
			left, err := v.LeaveOutRefused(ctx)
			if err != nil || len(left) == 0 {
				t.Fatalf("LeaveOutRefused = %v, %v", left, err)
			}
			if problems, err := v.Fsck(ctx); err != nil || len(problems) > 0 {
				t.Errorf("Fsck after LeaveOutRefused = %q, %v; want nothing", problems, err)
			}
			if got, err := read(t, v, "/memories/keep.md"); err != nil || got != "kept\n" {
				t.Errorf("keep.md = %q, %v", got, err)
			}
			if again, err := v.LeaveOutRefused(ctx); err != nil || len(again) > 0 {
				t.Errorf("LeaveOutRefused again = %v, %v; want nothing to do", again, err)
			}
		})
	}
}

// TestClone with SkipRefused: a remote whose head itself holds a refused entry
// clones with Clone with SkipRefused into a vault whose head leaves it out.
func TestCloneSkipRefused(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, _, opts := hostilePair(t, url)
	write(t, a, "/memories/keep.md", "kept\n")
	mustSync(t, a)
	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	bad := h.Change("memories/evil.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte("in the clear\n"))}, "hostile\n")
	c, left, err := vault.Clone(ctx, url, filepath.Join(t.TempDir(), "c.git"), opts, vault.CloneOptions{SkipRefused: true})
	if err != nil {
		t.Fatalf("Clone with SkipRefused = %v", err)
	}
	defer c.Close()
	if len(left) != 1 || left[0].Commit.String() != bad || left[0].Path != "memories/evil.md" {
		t.Fatalf("Clone with SkipRefused left out %+v, want commit %s's memories/evil.md", left, bad)
	}
	if got, err := read(t, c, "/memories/keep.md"); err != nil || got != "kept\n" {
		t.Errorf("keep.md = %q, %v", got, err)
	}
	if _, err := read(t, c, "/memories/evil.md"); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("evil.md after the clone: %v, want ErrNotExist", err)
	}
	if problems, err := c.Fsck(ctx); err != nil || len(problems) > 0 {
		t.Errorf("Fsck = %q, %v; want nothing", problems, err)
	}
}
