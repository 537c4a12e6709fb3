package vault_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestBothClonesRotate: two clones of a sealed vault each remove a different
// reader (each rotating the vault key) and write, then sync. They once never
// synced again ("the two sides are sealed with different vault keys") and the
// second clone's work never reached the remote. Now the merge seals under a
// new generation that chains both: both clones and every file, old versions
// included, read on; neither removed reader opens what the merge holds.
func TestBothClonesRotate(t *testing.T) {
	dir := t.TempDir()
	url := gittest.Bare(t, dir, "remote")
	a, b, opts := vaulttest.Pair(t, url)
	write(t, a, "/memories/shared.md", "both sides read this\n")
	if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a"}); err != nil {
		t.Fatal(err)
	}
	carol, dave := filepath.Join(dir, "carol"), filepath.Join(dir, "dave")
	var keysOf = map[string]string{}
	for _, p := range []string{carol, dave} {
		info, err := keys.CreateIdentity(p, keys.IdentityOptions{})
		if err != nil {
			t.Fatal(err)
		}
		keysOf[p] = info.Recipients[0].Key
	}
	if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{keysOf[carol], keysOf[dave]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Sync(ctx, vault.SyncOptions{Host: "b", AcceptRecipients: true}); err != nil {
		t.Fatal(err)
	}
	// Each clone removes another reader, and writes.
	if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{keysOf[carol]}}); err != nil {
		t.Fatal(err)
	}
	write(t, a, "/memories/from-a.md", "a, after removing carol\n")
	if _, err := b.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{keysOf[dave]}}); err != nil {
		t.Fatal(err)
	}
	write(t, b, "/memories/from-b.md", "b, after removing dave\n")
	if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a"}); err != nil {
		t.Fatal(err)
	}
	res, err := b.Sync(ctx, vault.SyncOptions{Host: "b", AcceptRecipients: true})
	if err != nil {
		t.Fatalf("the second clone's sync after both rotated: %+v, %v", res, err)
	}
	if _, err := a.Sync(ctx, vault.SyncOptions{Host: "a", AcceptRecipients: true}); err != nil {
		t.Fatalf("the first clone's sync of the merge: %v", err)
	}
	for _, v := range []*vault.Vault{a, b} {
		for p, want := range map[string]string{"/memories/shared.md": "both sides read this\n", "/memories/from-a.md": "a, after removing carol\n", "/memories/from-b.md": "b, after removing dave\n"} {
			if got, err := read(t, v, p); err != nil || got != want {
				t.Errorf("%s reads %s = %q, %v; want %q", v.Dir(), p, got, err, want)
			}
		}
		if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
			t.Errorf("fsck of %s = %q, %v", v.Dir(), problems, err)
		}
	}
	// Neither removed reader opens the merge.
	for _, who := range []string{carol, dave} {
		rv, err := vault.Open(ctx, a.Dir(), vault.Options{IdentityFile: who})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := rv.Snapshot(ctx)
		if err == nil {
			_, err = snap.ReadFile(ctx, "/memories/shared.md")
		}
		if err == nil {
			t.Errorf("%s, removed on one side, reads the merge", filepath.Base(who))
		} else if !errors.Is(err, vault.ErrDecrypt) && !errors.Is(err, vault.ErrNotRecipient) {
			t.Logf("%s: %v", filepath.Base(who), err)
		}
		rv.Close()
	}
	_ = opts
}
