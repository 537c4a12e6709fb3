package vault

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
)

// TestUndoReencryptsToNewRecipients: once a recipient has been added, restored
// and reverted content is encrypted again to the current recipients, not linked
// as the ciphertext of then, which the new recipient could not read. (The
// plain format: a sealed vault of format 3 encrypts each file to its key's
// generation, which a recipient added later opens through the key file.)
func TestUndoReencryptsToNewRecipients(t *testing.T) {
	ctx := context.Background()
	dir0 := t.TempDir()
	v, _, err := Init(ctx, filepath.Join(dir0, "v.git"), Options{IdentityFile: filepath.Join(dir0, "id"), Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	dir := filepath.Dir(v.Dir())
	write := func(p, s string) string { return mustCreate(t, v, p, s) }
	c1 := write("/memories/a", "one\n")
	write("/memories/b", "b1\n")
	mid := write("/memories/b", "b2\n")

	other, _ := age.GenerateX25519Identity()
	otherFile := filepath.Join(dir, "other")
	os.WriteFile(otherFile, []byte(other.String()+"\n"), 0o600)
	snap, _ := v.Snapshot(ctx)
	content, _ := snap.recipientsContent()
	w, _ := v.repo.Lock(ctx)
	head, _ := v.repo.Head()
	err = v.commit(w, head, "", "", []gitlog.Change{{Op: gitlog.Put, Path: recipientsPath, Data: append(content, other.Recipient().String()+"\n"...)}}, Meta{Command: "recipients"})
	w.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	write("/memories/a", "two\n")

	if _, err := v.Restore(ctx, Meta{}, "/memories/a", c1); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Revert(ctx, Meta{}, mid); err != nil {
		t.Fatal(err)
	}
	now, _ := v.Snapshot(ctx)
	for p, want := range map[string]string{"/memories/a": "one\n", "/memories/b": "b1\n"} {
		e, _, _ := now.lookup(p)
		if old, found, _ := mustSnap(t, v, c1).lookup(p); found && e.Hash == old.Hash {
			t.Errorf("%s: the old ciphertext was linked although the recipients changed", p)
		}
		ct, _ := v.repo.ReadBlob(e.Hash)
		if got, err := Decrypt(Options{IdentityFile: otherFile}, ct); err != nil || string(got) != want {
			t.Errorf("%s with the new recipient's identity = %q, %v; want %q", p, got, err, want)
		}
	}
}

func mustSnap(t *testing.T, v *Vault, rev string) *Snapshot {
	t.Helper()
	s, err := v.SnapshotAt(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
