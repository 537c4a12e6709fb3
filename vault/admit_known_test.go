package vault_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
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
