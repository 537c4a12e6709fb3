package vault_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkReviewList1000 lists 1,000 pending changes, each with its
// decrypted diff, from a vault opened afresh (nothing decrypted before), as
// `memvault review` does; the target is under a second.
func BenchmarkReviewList1000(b *testing.B) {
	for _, sealed := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "sealed"}[sealed], func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			var v *vault.Vault
			var opts vault.Options
			if sealed {
				v, opts = vaulttest.NewSealedAt(b, dir)
			} else {
				v, opts = vaulttest.NewPlainAt(b, dir)
			}
			s := v.Agent(vault.AgentOptions{Review: true})
			for i := range 1000 {
				p := fmt.Sprintf("/memories/d%02d/f%04d.md", i%10, i)
				err := s.Update(ctx, vault.Meta{Command: "create", Session: "bench", ToolUseID: fmt.Sprintf("toolu_%d", i)}, func(tx *vault.Tx) error {
					return tx.WriteFile(ctx, p, []byte(fmt.Sprintf("fact %d: the user likes short answers\n", i)))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			v.Close()
			for b.Loop() {
				v, err := vault.Open(ctx, v.Dir(), opts)
				if err != nil {
					b.Fatal(err)
				}
				ps, err := v.Review(ctx, vault.ReviewOptions{})
				if err != nil || len(ps) != 1000 {
					b.Fatalf("Review = %d, %v", len(ps), err)
				}
				v.Close()
			}
		})
	}
}

// BenchmarkAgentWrite is one durable create through the vault itself, through
// the AgentStore out of review mode (the guard reads the head's run first),
// and in review mode (on the review line), on a vault of 1,000 files.
func BenchmarkAgentWrite(b *testing.B) {
	ctx := context.Background()
	v := vaulttest.New(b)
	vaulttest.Seed(b, v, 1000, 1)
	stores := []struct {
		name string
		s    interface {
			Update(context.Context, vault.Meta, func(*vault.Tx) error) error
		}
	}{{"vault", v}, {"agent", v.Agent(vault.AgentOptions{})}, {"review", v.Agent(vault.AgentOptions{Review: true})}}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				p := fmt.Sprintf("/memories/bench/%s/%d.md", st.name, i)
				err := st.s.Update(ctx, vault.Meta{Command: "create", Session: "bench"}, func(tx *vault.Tx) error {
					return tx.WriteFile(ctx, p, []byte("a fact worth keeping\n"))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
