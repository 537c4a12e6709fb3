package vault_test

import (
	"slices"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// Commits memvault makes say what their trees did: none is marked.
func TestHonestTrailersAgree(t *testing.T) {
	a, _ := pair(t, fileRemote(t))
	put(t, a, "/memories/a.md", "a\n")
	put(t, a, "/memories/dir/b.md", "b\n")
	first := head(t, a)
	put(t, a, "/memories/a.md", "a2\n")
	mv(t, a, "/memories/a.md", "/memories/c.md")
	renamed := mv(t, a, "/memories/dir", "/memories/dir2")
	if _, err := a.Revert(ctx, vault.Meta{}, renamed); err != nil { // a directory's rename
		t.Fatal(err)
	}
	if _, err := a.Restore(ctx, vault.Meta{}, "/memories/a.md", first); err != nil {
		t.Fatal(err)
	}
	update(t, a, "delete", func(tx *vault.Tx) error { return tx.Remove("/memories/c.md") })
	if _, err := a.Revert(ctx, vault.Meta{}, head(t, a)); err != nil { // a delete
		t.Fatal(err)
	}
	if _, err := a.Rollback(ctx, vault.Meta{}, first); err != nil {
		t.Fatal(err)
	}
	_, other := newIdentity(t, keys.IdentityOptions{})
	if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{other}}); err != nil {
		t.Fatal(err)
	}
	recs := vaulttest.Log(t, a, vault.LogOptions{})
	recs = append(recs, vaulttest.Log(t, a, vault.LogOptions{Path: "/memories/dir/b.md"})...)
	for _, r := range recs {
		if r.TreeDisagrees {
			t.Errorf("Log: %s %q marked as disagreeing with its tree (changed %v)", r.Command, r.Path, r.TreeChanged)
		}
	}
}

// A collaborator's commit changed secret.md and said "str_replace
// /memories/notes.md": log, log of secret.md, show and blame repeated the
// trailer. Each now marks the record and says what the tree changed.
func TestTrailerThatLiesIsMarked(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := hostilePair(t, url)
	write(t, a, "/memories/notes.md", "notes\n")
	write(t, a, "/memories/secret.md", "secret\n")
	mustSync(t, a)
	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	// Another version of secret.md, encrypted to the vault as any writer can:
	// the blob of notes.md stands in for it.
	notes := h.Git("rev-parse", h.Head()+":memories/notes.md")
	tree := h.Set(h.Head()+"^{tree}", "memories/secret.md", gittest.TreeEntry{Mode: "100644", Hash: notes})
	lie := h.Commit(tree, "str_replace /memories/notes.md\n\nMemory-Command: str_replace\nMemory-Path: /memories/notes.md\nTool-Use-Id: toolu_0001\n", h.Head())
	h.Push(lie)
	mustSync(t, b)

	check := func(what string, r vault.Record) {
		t.Helper()
		if r.Commit != lie {
			t.Fatalf("%s: record of %s, want %s", what, r.Commit, lie)
		}
		if !r.TreeDisagrees || !slices.Equal(r.TreeChanged, []string{"/memories/secret.md"}) {
			t.Errorf("%s: TreeDisagrees %v, TreeChanged %v; want marked, with /memories/secret.md", what, r.TreeDisagrees, r.TreeChanged)
		}
	}
	check("log", vaulttest.Log(t, b, vault.LogOptions{Limit: 1})[0])
	check("log secret.md", vaulttest.Log(t, b, vault.LogOptions{Path: "/memories/secret.md", Limit: 1})[0])
	ch, err := b.Show(ctx, lie)
	if err != nil {
		t.Fatal(err)
	}
	check("show", ch.Record)
	bl, err := b.Blame(ctx, "/memories/secret.md", "")
	if err != nil {
		t.Fatal(err)
	}
	check("blame", bl.Commits[bl.Lines[0].Commit])
	if got := vaulttest.Log(t, b, vault.LogOptions{Path: "/memories/notes.md"}); slices.ContainsFunc(got, func(r vault.Record) bool { return r.Commit == lie }) {
		t.Errorf("log of notes.md lists the commit that did not change it: %v", got)
	}
}
