package vault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestSealedAddedRecipientReadsHistory: a recipient added to a sealed vault
// reads its history as in the plain format: every commit's message and the
// path's log, though not the contents written before it was added. Its log
// once failed at the first commit before the addition, whose key file was
// not encrypted to it, though the key in it was the one it holds. Once
// removed, it reads nothing written after: the key rotated.
func TestSealedAddedRecipientReadsHistory(t *testing.T) {
	v, _ := vaulttest.NewSealedAt(t, t.TempDir())
	write(t, v, "/memories/a.md", "one")
	write(t, v, "/memories/notes/b.md", "two")
	bobID, bob := newIdentity(t, keys.IdentityOptions{})
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(commands(t, v, vault.LogOptions{}))
	bv := openAs(t, v.Dir(), bobID)
	if got := fmt.Sprint(commands(t, bv, vault.LogOptions{})); got != want {
		t.Errorf("the added recipient's log = %s, want %s", got, want)
	}
	path := vault.LogOptions{Path: "/memories/notes/b.md"}
	if got, want := fmt.Sprint(commands(t, bv, path)), fmt.Sprint(commands(t, v, path)); got != want {
		t.Errorf("the added recipient's log of b.md = %s, want %s", got, want)
	}
	if got, err := read(t, bv, "/memories/notes/b.md"); err != nil || got != "two" {
		t.Errorf("the added recipient reads b.md = %q, %v", got, err)
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	write(t, v, "/memories/after.md", "not for bob")
	gone := openAs(t, v.Dir(), bobID)
	if _, err := read(t, gone, "/memories/after.md"); !errors.Is(err, vault.ErrDecrypt) {
		t.Errorf("the removed recipient reads after.md: err = %v, want ErrDecrypt", err)
	}
	if _, err := gone.Log(ctx, vault.LogOptions{Limit: 1}); !errors.Is(err, vault.ErrDecrypt) {
		t.Errorf("the removed recipient's log of the newest commit: err = %v, want ErrDecrypt", err)
	}
}

// commands lists the commands of v's log, failing the test on an error.
func commands(t *testing.T, v *vault.Vault, opts vault.LogOptions) []string {
	t.Helper()
	var out []string
	for _, r := range vaulttest.Log(t, v, opts) {
		out = append(out, r.Command+" "+r.Path)
	}
	return out
}
