package vault_test

import (
	"context"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// cpuPerOp reports the process's CPU time per operation beside the wall time:
// on a shared machine the wall time grows with the load, the CPU time does not.
// Work spread over both cores counts twice, so it can exceed the wall time.
func cpuPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((vaulttest.CPUTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

var (
	blameOnce  [2]sync.Once
	blameVault [2]struct{ dir, identity string }
)

// blameHistory is a vault whose /memories/long.md has 500 lines and 2,000
// versions, built once per process.
func blameHistory(b *testing.B) (string, vault.Options) { return blameHistoryIn(b, false) }

// blameHistoryIn is blameHistory in the plain or the sealed format.
func blameHistoryIn(b *testing.B, sealed bool) (string, vault.Options) {
	i := 0
	if sealed {
		i = 1
	}
	blameOnce[i].Do(func() {
		dir := benchDir(b)
		opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: !sealed}
		v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
		if err != nil {
			b.Fatal(err)
		}
		vaulttest.EditedFile(b, v, "/memories/long.md", 500, 2000)
		v.Close()
		vaulttest.Writeback()
		blameVault[i].dir, blameVault[i].identity = filepath.Join(dir, "vault.git"), opts.IdentityFile
	})
	if blameVault[i].dir == "" {
		b.Fatal("building the history failed")
	}
	return blameVault[i].dir, vault.Options{IdentityFile: blameVault[i].identity}
}

// BenchmarkBlame blames a 500-line file with 2,000 versions in a freshly opened
// vault (nothing decrypted yet), as `memvault blame` does. Target: ≤ 1 s as a
// whole process (cmd/memvault's BenchmarkProvenanceProcess).
func BenchmarkBlame(b *testing.B) {
	dir, opts := blameHistory(b)
	defer cpuPerOp(b, vaulttest.CPUTime())
	for b.Loop() {
		v, err := vault.Open(context.Background(), dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		bl, err := v.Blame(context.Background(), "/memories/long.md", "")
		if err != nil || len(bl.Lines) != 500 {
			b.Fatalf("Blame = %v lines, %v; want 500", len(bl.Lines), err)
		}
		v.Close()
	}
}

// BenchmarkGrep searches 10,000 files of 1 KB: cold (a freshly opened vault,
// each file decrypted) and warm (the same vault again, as a long-lived MCP
// server has it). Targets: ≤ 1 s as a whole process, ≤ 50 ms warm.
func BenchmarkGrep(b *testing.B) {
	v := seededVault(b, 10000, 1)
	re := regexp.MustCompile(`memory line 4242 about`)
	grep := func(b *testing.B, v *vault.Vault) {
		res, err := v.Grep(context.Background(), re, vault.GrepOptions{})
		if err != nil || len(res.Files) != 1 || res.Files[0].Matches != 24 {
			b.Fatalf("Grep = %+v, %v; want one file of 24 matches", res, err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			v2, err := vault.Open(context.Background(), v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
			if err != nil {
				b.Fatal(err)
			}
			grep(b, v2)
			v2.Close()
		}
	})
	b.Run("warm", func(b *testing.B) {
		grep(b, v)
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			grep(b, v)
		}
	})
}

// BenchmarkPickaxe runs log -S over 10,000 commits (each overwriting a 1 KB
// file) in a freshly opened vault. Target: ≤ 3 s.
func BenchmarkPickaxe(b *testing.B) {
	v := seededVault(b, 100, 10000)
	defer cpuPerOp(b, vaulttest.CPUTime())
	for b.Loop() {
		v2, err := vault.Open(context.Background(), v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
		if err != nil {
			b.Fatal(err)
		}
		recs, err := v2.Log(context.Background(), vault.LogOptions{Pickaxe: "memory line 5000 about"})
		if err != nil || len(recs) != 2 {
			b.Fatalf("Log(-S) = %d records, %v; want 2", len(recs), err)
		}
		v2.Close()
	}
}
