package vault_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkSealed puts the sealed format against the plain one, in one run, on
// vaults of 1,000 files of 1 KB in 10 folders: a durable write, a warm view of
// a file, the listing of /memories two levels deep (every name and size), and
// the first 100 records of the log. Compare each sealed figure with the plain
// one beside it:
//
//	go test ./vault -run '^$' -bench BenchmarkSealed -count 5
func BenchmarkSealed(b *testing.B) {
	ctx := context.Background()
	const files = 1000
	for _, sealed := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "sealed"}[sealed]
		key := fmt.Sprint("sealed-bench", sealed)
		var v *vault.Vault
		if got, ok := benchVaults.Load(key); ok {
			v = got.(*vault.Vault)
		} else {
			dir := benchDir(b)
			var err error
			v, _, err = vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: !sealed})
			if err != nil {
				b.Fatal(err)
			}
			vaulttest.Seed(b, v, files, 200)
			benchVaults.Store(key, v)
		}
		b.Run("write/"+name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			i := 0
			for b.Loop() {
				vaulttest.Write(b, v, vaulttest.FilePath(rng.IntN(files)), vaulttest.Content(i))
				i++
			}
		})
		b.Run("view/"+name, func(b *testing.B) {
			for b.Loop() {
				s, err := v.Snapshot(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.ReadFile(ctx, vaulttest.FilePath(42)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("list/"+name, func(b *testing.B) {
			for b.Loop() {
				s, err := v.Snapshot(ctx)
				if err != nil {
					b.Fatal(err)
				}
				top, err := s.List(ctx, "/memories")
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range top {
					if _, err := s.List(ctx, "/memories/"+e.Name); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("log100/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := v.Log(ctx, vault.LogOptions{Limit: 100}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
