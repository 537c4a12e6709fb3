package vault

import (
	"context"
	"errors"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
)

// A file the identity cannot open stops the conversion before anything
// changes: its plaintext cannot be padded, and no file is left behind.
func TestSealRefusesFileItCannotOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _, err := Init(ctx, dir+"/vault.git", Options{IdentityFile: dir + "/identity"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Update(ctx, Meta{Command: "create"}, func(tx *Tx) error {
		return tx.WriteFile(ctx, "/memories/mine.md", []byte("mine"))
	}); err != nil {
		t.Fatal(err)
	}
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	ct, err := encrypt([]byte("not yours"), []age.Recipient{other.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	hostileCommit(t, v, "create /memories/foreign.md\n", gitlog.Change{Op: gitlog.Put, Path: "memories/foreign.md", Data: ct})
	head, _ := v.repo.Head()
	_, err = v.Seal(ctx, Meta{}, SealOptions{})
	if !errors.Is(err, ErrDecrypt) {
		t.Errorf("Seal with a file the identity cannot open: err = %v, want ErrDecrypt", err)
	}
	if now, _ := v.repo.Head(); now != head {
		t.Errorf("a refused Seal moved main from %s to %s", head, now)
	}
	if k, err := v.currentKey(); err != nil || k != nil {
		t.Errorf("after a refused Seal the vault's key = %v, %v; want the plain format", k, err)
	}
}
