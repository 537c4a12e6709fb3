package vault_test

import (
	"errors"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/vault"
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
		w.same("ChangeRecipients", func(v *vault.Vault, _ func(string) string) (any, error) {
			res, err := v.ChangeRecipients(ctx, vault.Meta{}, ch)
			return res.Files, err
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
