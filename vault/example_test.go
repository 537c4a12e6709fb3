package vault_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/vault"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "memvault-example-")
	defer os.RemoveAll(dir)

	// Init makes the vault and, since none exists there yet, its identity.
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()

	// Every change happens inside Update and becomes one commit.
	err = v.Update(ctx, vault.Meta{Command: "create", ToolUseID: "toolu_01"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/user.md", []byte("Prefers Go.\n"))
	})
	if err != nil {
		log.Fatal(err)
	}

	snap, _ := v.Snapshot(ctx)
	text, _ := snap.ReadFile(ctx, "/memories/user.md")
	fmt.Printf("%s", text)

	recs, _ := v.Log(ctx, vault.LogOptions{Limit: 1})
	fmt.Println(recs[0].Subject, recs[0].ToolUseID)
	// Output:
	// Prefers Go.
	// create /memories/user.md toolu_01
}
