package vault_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// Sharing a vault: Bob makes an identity and hands over its public key; Alice
// adds it, which re-encrypts every memory file to both of them in one commit.
func ExampleVault_ChangeRecipients() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "memvault-example-")
	defer os.RemoveAll(dir)

	alice, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "alice")})
	if err != nil {
		log.Fatal(err)
	}
	defer alice.Close()
	err = alice.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/plan.md", []byte("ship it\n"))
	})
	if err != nil {
		log.Fatal(err)
	}

	bob, err := keys.CreateIdentity(filepath.Join(dir, "bob"), keys.IdentityOptions{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{
		Add:     []string{bob.Recipients[0].Key},
		Comment: "bob's laptop",
	})
	if err != nil {
		log.Fatal(err)
	}
	// A sealed vault (the default) wraps its key anew for bob: no file is
	// encrypted again, and he reads them all through it.
	fmt.Printf("added %d key, re-encrypted %d files\n", len(res.Added), res.Files)

	asBob, err := vault.Open(ctx, alice.Dir(), vault.Options{IdentityFile: bob.Path})
	if err != nil {
		log.Fatal(err)
	}
	defer asBob.Close()
	s, _ := asBob.Snapshot(ctx)
	plan, err := s.ReadFile(ctx, "/memories/plan.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("bob reads: %s", plan)
	// Output:
	// added 1 key, re-encrypted 0 files
	// bob reads: ship it
}
