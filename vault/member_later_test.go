package vault_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestReaderAddedAfterFirstWrite: a recipient added to a vault that already
// holds history clones it, reads what is current, and, in the sealed format,
// reads the whole history as well: its names, its messages and its older
// contents. The clone of a sealed vault once failed ("a vault key that does
// not open for this identity"): each older tree's key file was encrypted to
// the members of its time, and admission wanted each to open.
func TestReaderAddedAfterFirstWrite(t *testing.T) {
	for _, format := range []struct {
		name  string
		plain bool
	}{{"plain", true}, {"sealed", false}} {
		t.Run(format.name, func(t *testing.T) {
			dir := t.TempDir()
			url := gittest.Bare(t, dir, "remote")
			var alice *vault.Vault
			if format.plain {
				alice, _ = vaulttest.NewPlainAt(t, filepath.Join(dir, "alice"))
			} else {
				alice, _ = vaulttest.NewAt(t, filepath.Join(dir, "alice"))
			}
			write(t, alice, "/memories/notes/plan.md", "version one\n")
			first, err := alice.Head()
			if err != nil {
				t.Fatal(err)
			}
			write(t, alice, "/memories/notes/plan.md", "version two\n")
			write(t, alice, "/memories/people.md", "bob joins soon\n")

			bobID := filepath.Join(dir, "bob", "identity")
			info, err := keys.CreateIdentity(bobID, keys.IdentityOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{info.Recipients[0].Key}, Comment: "bob"}); err != nil {
				t.Fatalf("add bob as a recipient: %v", err)
			}
			if err := alice.AddRemote("origin", url); err != nil {
				t.Fatal(err)
			}
			if _, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice"}); err != nil {
				t.Fatalf("alice's sync: %v", err)
			}

			bob, _, err := vault.Clone(ctx, url, filepath.Join(dir, "bob", "vault.git"), vault.Options{IdentityFile: bobID, Plain: format.plain}, vault.CloneOptions{})
			if err != nil {
				t.Fatalf("bob's clone after he was added: %v", err)
			}
			defer bob.Close()
			for p, want := range map[string]string{"/memories/notes/plan.md": "version two\n", "/memories/people.md": "bob joins soon\n"} {
				if got, err := read(t, bob, p); err != nil || got != want {
					t.Errorf("bob reads %s = %q, %v; want %q", p, got, err, want)
				}
			}
			recs, err := bob.Log(ctx, vault.LogOptions{Path: "/memories/notes/plan.md", Command: "create"})
			if err != nil || len(recs) != 2 {
				t.Errorf("bob's log of plan.md's creates = %+v, %v; want both versions, opened", recs, err)
			}
			old, err := bob.SnapshotAt(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			got, err := old.ReadFile(ctx, "/memories/notes/plan.md")
			switch {
			case format.plain && err == nil:
				t.Errorf("bob read a plain vault's version from before he was added: %q (the plain format has no key to chain)", got)
			case !format.plain && (err != nil || string(got) != "version one\n"):
				t.Errorf("bob reads plan.md as it was before he was added = %q, %v; want %q", got, err, "version one\n")
			}
			if !format.plain {
				b, err := bob.Blame(ctx, "/memories/notes/plan.md", "")
				if err != nil || len(b.Lines) != 1 || !strings.HasPrefix(b.Lines[0].Text, "version two") {
					t.Errorf("bob's blame of plan.md = %+v, %v", b, err)
				}
			}
			if problems, err := bob.Fsck(ctx); err != nil || len(problems) != 0 {
				t.Errorf("bob's fsck = %q, %v", problems, err)
			}
		})
	}
}
