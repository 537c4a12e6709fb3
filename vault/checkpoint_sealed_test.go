package vault_test

import (
	"errors"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// A checkpoint's name is taken once, in either format, whatever happened to
// the vault key since it was made. A sealed vault seals a checkpoint's name
// under the key of the tree at the time, so after a recipient's removal
// rotated the key the same name sealed to another tag name, the existence
// check missed it, and a second tag of the same name was made; a name a
// checkpoint took before the vault was converted was taken again the same way.
func TestCheckpointNameTakenAcrossKeyChange(t *testing.T) {
	w := newTwins(t)
	w.history()
	w.same("Checkpoint(keep)", func(v *vault.Vault, rev func(string) string) (any, error) {
		return v.Checkpoint(ctx, "keep", "", "")
	})
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []vault.RecipientChange{{Add: []string{other.Recipient().String()}}, {Remove: []string{other.Recipient().String()}}} {
		// The count of files differs (a sealed vault adds a member by
		// wrapping its key anew, re-encrypting no file); the errors must not.
		w.same("ChangeRecipients", func(v *vault.Vault, _ func(string) string) (any, error) {
			_, err := v.ChangeRecipients(ctx, vault.Meta{}, ch)
			return nil, err
		})
	}
	for _, v := range []*vault.Vault{w.plain, w.sealed} {
		_, err := v.Checkpoint(ctx, "keep", "", "again")
		if !errors.Is(err, vault.ErrExist) {
			t.Errorf("Checkpoint(keep) again after a rotation, on %s: err = %v, want ErrExist", v.Dir(), err)
		}
		cps, err := v.Checkpoints(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) != 1 || cps[0].Name != "keep" {
			t.Errorf("Checkpoints on %s = %+v, want the one keep", v.Dir(), cps)
		}
	}

	// A checkpoint made while the vault was plain keeps its name through the
	// conversion, and the name stays taken.
	dir := t.TempDir()
	v, _ := newPlainAt(t, dir)
	defer v.Close()
	write(t, v, "/memories/a.md", "a\n")
	if _, err := v.Checkpoint(ctx, "before", "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Checkpoint(ctx, "before", "", ""); !errors.Is(err, vault.ErrExist) {
		t.Errorf("Checkpoint(before) after the conversion: err = %v, want ErrExist", err)
	}
	if cps, err := v.Checkpoints(ctx); err != nil || len(cps) != 1 {
		t.Errorf("Checkpoints after the conversion = %+v, %v; want the one made before", cps, err)
	}
}

// A checkpoint made at an older commit is sealed under the key current when it
// was made, which after one more rotation is neither the current key nor its
// commit's: its name is still found, in this process and in a new one, and
// stays taken.
func TestCheckpointAtOlderCommitAcrossTwoRotations(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/a.md", "a\n")
	c0, err := v.Head()
	if err != nil {
		t.Fatal(err)
	}
	rotate := func() {
		t.Helper()
		other, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range []vault.RecipientChange{{Add: []string{other.Recipient().String()}}, {Remove: []string{other.Recipient().String()}}} {
			if _, err := v.ChangeRecipients(ctx, vault.Meta{}, ch); err != nil {
				t.Fatal(err)
			}
		}
	}
	rotate()
	if _, err := v.Checkpoint(ctx, "old", c0, "at the first commit"); err != nil {
		t.Fatal(err)
	}
	rotate()
	check := func(v *vault.Vault, when string) {
		t.Helper()
		cps, err := v.Checkpoints(ctx)
		if err != nil || len(cps) != 1 || cps[0].Name != "old" || cps[0].Message != "at the first commit" {
			t.Errorf("Checkpoints %s = %+v, %v; want old, opened", when, cps, err)
		}
		if _, err := v.Checkpoint(ctx, "old", "", ""); !errors.Is(err, vault.ErrExist) {
			t.Errorf("Checkpoint(old) again %s: err = %v, want ErrExist", when, err)
		}
	}
	check(v, "in the process that made it")
	v2, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	check(v2, "in a new process")
}
