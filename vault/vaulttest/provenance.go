package vaulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// EditedFile writes the memory file p with lines lines, then rewrites it
// versions-1 times, each version changing a few lines here and there (one
// replaced, one inserted, one deleted) as an agent's edits do, one commit each.
// The file's length stays about lines. The same arguments give the same history.
func EditedFile(tb testing.TB, v *vault.Vault, p string, lines, versions int) {
	tb.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(lines), uint64(versions)))
	fresh := 0
	line := func() string {
		fresh++
		return fmt.Sprintf("line %d: the user said something worth keeping about topic %d\n", fresh, rng.IntN(100))
	}
	text := make([]string, lines)
	for i := range text {
		text[i] = line()
	}
	for ver := range versions {
		if ver > 0 {
			text[rng.IntN(len(text))] = line()
			text = slices.Insert(text, rng.IntN(len(text)+1), line())
			i := rng.IntN(len(text))
			text = slices.Delete(text, i, i+1)
		}
		data := []byte(strings.Join(text, ""))
		err := v.Update(ctx, vault.Meta{Command: "str_replace", ToolUseID: fmt.Sprintf("toolu_%d", ver)}, func(tx *vault.Tx) error {
			return tx.WriteFile(ctx, p, data)
		})
		if err != nil {
			tb.Fatalf("edited file: version %d: %v", ver, err)
		}
	}
}
