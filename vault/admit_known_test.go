package vault_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// After a victim left out a symbolic link and a plaintext file with
// SkipRefused, a merge whose second parent is the refused commit brought them
// back: the check skipped entries "the same as in a parent", and the refused
// commit was a parent. An entry is known only when this clone admitted it:
// what would become main is judged against main as this clone holds it.
func TestLeftOutDoesNotComeBack(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := hostilePair(t, url)
	write(t, a, "/memories/notes.md", "mine\n")
	mustSync(t, a)
	mustSync(t, b)

	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	tree := h.Set(h.Head()+"^{tree}", "memories/link.md", gittest.TreeEntry{Mode: "120000", Hash: h.Blob([]byte("/etc/passwd"))})
	tree = h.Set(tree, "memories/secret.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte("plaintext secret\n"))})
	refused := h.Commit(tree, "hostile\n", h.Head())
	h.Push(refused)

	res, err := b.Sync(ctx, vault.SyncOptions{Host: "test", SkipRefused: true})
	if err != nil || len(res.LeftOut) != 2 {
		t.Fatalf("Sync(SkipRefused) = %+v, %v; want both entries left out", res, err)
	}
	// The host merges the victim's head with the refused commit, keeping the
	// refused commit's tree.
	h.Git("fetch", "-q", url, "+refs/heads/main:refs/heads/main")
	merged := h.Commit(h.Git("rev-parse", refused+"^{tree}"), "merge\n", h.Head(), refused)
	h.Push(merged)

	before := head(t, b)
	for _, o := range []vault.SyncOptions{{Host: "test"}, {Host: "test", Mode: vault.SyncPull}} {
		if _, err := b.Sync(ctx, o); !errors.Is(err, vault.ErrRefused) {
			t.Errorf("Sync(%+v) = %v, want ErrRefused", o, err)
		}
		if got := head(t, b); got != before {
			t.Fatalf("head moved from %s to %s", before, got)
		}
	}
	// A fresh clone that skips refused entries leaves them out too: the
	// trailers name the refused commit's entries, and the head's tree is
	// judged whole.
	c, left, err := vault.Clone(ctx, url, filepath.Join(t.TempDir(), "c.git"), opts, vault.CloneOptions{SkipRefused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(left) == 0 {
		t.Errorf("Clone with SkipRefused left nothing out")
	}
	inMain(t, c, false)
	// fsck does not call sound a main that holds them (moved there by hand).
	c.Close()
	gittest.Damage(t, c.Dir()).Push(merged)
	c, err = vault.Open(ctx, c.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if problems, err := c.Fsck(ctx); err != nil || !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "symbolic link") }) {
		t.Errorf("Fsck of a main holding a left-out symlink = %q, %v; want it named", problems, err)
	}
	// Skipping again leaves them out again.
	if _, err := b.Sync(ctx, vault.SyncOptions{Host: "test", SkipRefused: true}); err != nil {
		t.Fatal(err)
	}
	inMain(t, b, false)
	if got, err := read(t, b, "/memories/notes.md"); err != nil || got != "mine\n" {
		t.Errorf("notes.md = %q, %v", got, err)
	}
}

// inMain checks, as git reads v's main branch, whether it holds the left-out
// entries.
func inMain(t *testing.T, v *vault.Vault, want bool) {
	t.Helper()
	blobs := gitFileBlobs(t, v)
	for _, p := range []string{"memories/link.md", "memories/secret.md"} {
		if _, ok := blobs[p]; ok != want {
			t.Errorf("main holds %s: %v, want %v", p, ok, want)
		}
	}
}

// A fast-forward over another clone's merge once asked for a merge base per
// arriving commit, each of which walked the other side's history: the check
// grew with the square of the history (6 s for 1,000 commits a side). What
// the check does, counted in allocations (which follow the commits and
// trees it reads, and do not depend on the machine's load), must grow with
// the commits that arrived: eight times the commits, at most about eight
// times the work.
func TestAdmitLinearOverMerge(t *testing.T) {
	work := func(n int) float64 {
		dir := t.TempDir()
		va, opts := vaulttest.NewAt(t, dir)
		url := fileRemote(t)
		if err := va.AddRemote("origin", url); err != nil {
			t.Fatal(err)
		}
		mustSync(t, va)
		vb, _, err := vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer vb.Close()
		defer va.Close()
		for i := range n {
			vaulttest.Write(t, va, fmt.Sprintf("/memories/a/%d.md", i%10), fmt.Appendf(nil, "a %d\n", i))
			vaulttest.Write(t, vb, fmt.Sprintf("/memories/b/%d.md", i%10), fmt.Appendf(nil, "b %d\n", i))
		}
		mustSync(t, vb)
		if res := mustSync(t, va); res.Action != "merge" {
			t.Fatalf("Sync = %+v, want a merge", res)
		}
		theirs, err := vault.FetchForAdmit(ctx, vb, "origin")
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(3, func() {
			if n, err := vault.AdmitFetched(ctx, vb, theirs); err != nil || n != 0 {
				t.Fatalf("AdmitFetched = %d refused, %v", n, err)
			}
		})
	}
	small, big := work(25), work(200)
	t.Logf("allocations: %.0f for 25 commits a side, %.0f for 200", small, big)
	if big > 12*small {
		t.Errorf("admitting 200 commits a side took %.1fx the allocations of 25, want at most 12x (linear: 8x)", big/small)
	}
}

// Admission finds what arrived by a walk told by commit times, which the
// host writes as it likes. Hostile commits past a merge, dated long before
// anything in the history and far after it, and hung on the history's first
// commit, are judged all the same: the fast-forward is refused, naming both.
func TestAdmitSkewedDates(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := hostilePair(t, url)
	for i := range 5 {
		write(t, a, fmt.Sprintf("/memories/%d.md", i), "x\n")
	}
	mustSync(t, a)
	mustSync(t, b)

	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	first := h.Git("rev-list", "--max-parents=0", "refs/heads/main")
	var bad []string
	for _, date := range []string{"@100 +0000", "@4102444800 +0000"} { // 1970, 2100
		t.Setenv("GIT_COMMITTER_DATE", date)
		tree := h.Set(first+"^{tree}", "memories/link.md", gittest.TreeEntry{Mode: "120000", Hash: h.Blob([]byte("/etc/passwd"))})
		bad = append(bad, h.Commit(tree, "hostile\n", first))
	}
	t.Setenv("GIT_COMMITTER_DATE", "")
	h.Push(h.Commit(h.Head()+"^{tree}", "merge\n", h.Head(), bad[0], bad[1]))

	before := head(t, b)
	_, err := b.Sync(ctx, vault.SyncOptions{Host: "test"})
	if !errors.Is(err, vault.ErrRefused) {
		t.Fatalf("Sync = %v, want ErrRefused", err)
	}
	for _, c := range bad {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("Sync error %q does not name commit %s", err, c)
		}
	}
	if got := head(t, b); got != before {
		t.Errorf("head moved from %s to %s", before, got)
	}
}
