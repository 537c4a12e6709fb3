package vault_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// benchVaults holds seeded vaults across -count runs: seeding 10,000 commits takes
// seconds and is not what is measured.
var (
	benchVaults sync.Map
	benchDirs   []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func benchDir(b *testing.B) string {
	dir, err := os.MkdirTemp("", "memvault-bench-")
	if err != nil {
		b.Fatal(err)
	}
	benchDirs = append(benchDirs, dir)
	return dir
}

// seededVault returns a vault of files 1 KB files and commits commits.
func seededVault(b *testing.B, files, commits int) *vault.Vault {
	key := fmt.Sprint(files, commits)
	if v, ok := benchVaults.Load(key); ok {
		return v.(*vault.Vault)
	}
	dir := benchDir(b)
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		b.Fatal(err)
	}
	vaulttest.Seed(b, v, files, commits)
	benchVaults.Store(key, v)
	vaulttest.Writeback() // let seeding's writeback finish before anything is timed
	return v
}

// reportLatency adds the median and 90th percentile of per-operation times.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkWrite is one durable write command (overwrite of a 1 KB file at depth
// two) in process, on vaults of growing size. Target: p50 ≤ 3 ms at 10,000 files
// and 10,000 commits, and ≤ 1.5× the 100-file figure. BenchmarkNaiveGit is its
// baseline.
func BenchmarkWrite(b *testing.B) {
	for _, size := range []struct{ files, commits int }{{100, 100}, {5000, 100}, {10000, 10000}} {
		b.Run(fmt.Sprintf("files=%d/commits=%d", size.files, size.commits), func(b *testing.B) {
			v := seededVault(b, size.files, size.commits)
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				vaulttest.Write(b, v, vaulttest.FilePath(rng.IntN(size.files)), vaulttest.Content(i))
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkNaiveGit is the same write done the naive way: encrypt to a file in a
// checkout of 5,000 ciphertext files, then `git add` and `git commit`.
// fsync=default keeps git's defaults; fsync=all makes it as durable as memvault.
func BenchmarkNaiveGit(b *testing.B) {
	const files = 5000
	n := vaulttest.NewNaive(b, b.TempDir(), files)
	for _, fsync := range []string{"default", "all"} {
		b.Run("files=5000/fsync="+fsync, func(b *testing.B) {
			if fsync == "all" {
				n.SetConfig("core.fsync", "all")
			}
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				n.Write(vaulttest.FilePath(rng.IntN(files)), vaulttest.Content(i))
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}
