package memstore_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/agent/memstoreapi/memstoreapitest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/memstore"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkPull10k pulls a store of 2,000 memories and 10,000 versions into
// a new vault: 10,000 commits.
func BenchmarkPull10k(b *testing.B) {
	s := memstoreapitest.New(b)
	for i := range 10000 {
		s.Write(fmt.Sprintf("/agents/%02d/m%04d.md", i%37, i%2000), fmt.Sprintf("memory %d, version %d\n", i%2000, i/2000), memstoreapitest.Session("sesn_bench"))
	}
	o := opts(s)
	o.Pull = true
	for b.Loop() {
		b.StopTimer()
		v := vaulttest.New(b)
		b.StartTimer()
		res, err := memstore.Sync(ctx, v, client(s), o)
		if err != nil || res.Pulled != 10000 {
			b.Fatalf("pull = %+v, %v", res, err)
		}
	}
}

// BenchmarkPush1k pushes 1,000 local changes to a store of 2,000 memories.
func BenchmarkPush1k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s := memstoreapitest.New(b)
		for i := range 2000 {
			s.Write(fmt.Sprintf("/m%04d.md", i), "memory\n", memstoreapitest.Session("sesn_bench"))
		}
		v := vaulttest.New(b)
		if _, err := memstore.Sync(ctx, v, client(s), opts(s)); err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			p := fmt.Sprintf("/memories/m%04d.md", i*2)
			if err := v.Update(ctx, vault.Meta{Command: "str_replace"}, func(tx *vault.Tx) error {
				return tx.WriteFile(ctx, p, []byte("changed here\n"))
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		res, err := memstore.Sync(ctx, v, client(s), opts(s))
		if err != nil || res.Pushed != 1000 {
			b.Fatalf("push = %+v, %v", res, err)
		}
	}
}
