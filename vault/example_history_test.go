package vault_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/vault"
)

// Every change is a commit, so any of them can be seen and taken back, itself by
// a new commit.
func Example_history() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "memvault-example-")
	defer os.RemoveAll(dir)
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	write := func(text string) {
		err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
			return tx.WriteFile(ctx, "/memories/plan.md", []byte(text))
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	write("step 1: design\nstep 2: build\nstep 3: test\nstep 4: ship\n")
	v.Checkpoint(ctx, "planned", "main", "the plan as first written")
	write("step 1: design (done)\nstep 2: build\nstep 3: test\nstep 4: ship\n")
	write("step 1: design (done)\nstep 2: build\nstep 3: test\nstep 4: ship on Friday\n")

	// What did the commit before the last one do?
	ch, _ := v.Show(ctx, "main~1")
	fmt.Print(ch.Files[0].Diff)

	// Undo it, keeping the later edit.
	res, err := v.Revert(ctx, vault.Meta{Agent: "example"}, "main~1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Files[0].Path, res.Files[0].Status)
	snap, _ := v.Snapshot(ctx)
	text, _ := snap.ReadFile(ctx, "/memories/plan.md")
	fmt.Print(string(text))

	// Everything back to the checkpoint.
	v.Rollback(ctx, vault.Meta{Agent: "example"}, "planned")
	recs, _ := v.Log(ctx, vault.LogOptions{Path: "/memories/plan.md", Limit: 2})
	for _, r := range recs {
		fmt.Println(r.Command)
	}
	// Output:
	// --- /memories/plan.md
	// +++ /memories/plan.md
	// @@ -1,4 +1,4 @@
	// -step 1: design
	// +step 1: design (done)
	//  step 2: build
	//  step 3: test
	//  step 4: ship
	// /memories/plan.md modified
	// step 1: design
	// step 2: build
	// step 3: test
	// step 4: ship on Friday
	// rollback
	// revert
}
