package vault_test

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestThiefOfSealedFolderSeesNoName: a thief of a sealed vault's folder (a
// laptop, a backup) learns what the host learns, and no more. After writes,
// views, a rename, history reads, grep, expire, a sync, a change of members,
// a rekey and gc, no file of the folder (refs, packs, the journal, the
// reflog, the history index, the views, the progress and clone records)
// holds a plaintext path or name the vault was given. The views file held
// "/memories/hiv-test-results-2026.md" in the clear.
func TestThiefOfSealedFolderSeesNoName(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewSealedAt(t, dir)
	// Each name holds "_x-" (no sealed name, base32 or base64 has "_" and
	// "-" together), so none turns up by chance.
	names := []string{"hiv_x-test-results-2026.md", "divorce_x-lawyer.md", "folder_x-secret", "renamed_x-later.md"}
	write(t, v, "/memories/"+names[0], "results\n")
	write(t, v, "/memories/"+names[2]+"/"+names[1], "contacts\n")
	for _, p := range []string{"/memories/" + names[0], "/memories/" + names[2] + "/" + names[1]} {
		snap, err := v.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snap.ReadFile(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := v.RecordView(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Update(ctx, vault.Meta{Command: "rename"}, func(tx *vault.Tx) error {
		return tx.Rename("/memories/"+names[0], "/memories/"+names[3])
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Log(ctx, vault.LogOptions{Path: "/memories/" + names[3]}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Blame(ctx, "/memories/"+names[3], ""); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Grep(ctx, regexp.MustCompile("results"), vault.GrepOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Expire(ctx, time.Hour, true); err != nil {
		t.Fatal(err)
	}
	url := gittest.Bare(t, dir, "remote")
	if err := v.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Sync(ctx, vault.SyncOptions{Host: "test"}); err != nil {
		t.Fatal(err)
	}
	info, err := keys.CreateIdentity(filepath.Join(dir, "bob"), keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{info.Recipients[0].Key}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Pack(ctx); err != nil {
		t.Fatal(err)
	}
	if err := v.RecordView("/memories/" + names[3]); err != nil {
		t.Fatal(err)
	}
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "vault.git")
	for _, name := range names {
		if found := vaulttest.FindInFiles(t, folder, []byte(name)); len(found) > 0 {
			t.Errorf("a thief of the vault folder reads %q in %v", name, found)
		}
		if found := vaulttest.FindInFiles(t, url, []byte(name)); len(found) > 0 {
			t.Errorf("the host reads %q in %v", name, found)
		}
	}
	_ = opts
}
