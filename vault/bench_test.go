package vault_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
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
	return seededVaultIn(b, files, commits, false)
}

// seededVaultIn is seededVault in the plain or the sealed format.
func seededVaultIn(b *testing.B, files, commits int, sealed bool) *vault.Vault {
	key := fmt.Sprint(files, commits, sealed)
	if v, ok := benchVaults.Load(key); ok {
		return v.(*vault.Vault)
	}
	dir := benchDir(b)
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: !sealed})
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
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkWrite is one durable write command (overwrite of a 1 KB file at depth
// two) in process, on vaults of growing size. Target: p50 ≤ 3 ms at 10,000 files
// and 10,000 commits, and ≤ 1.5× the 100-file figure. Its baseline is
// BenchmarkGitInProcess, also in process; BenchmarkNaiveGit starts processes and
// is no baseline for it.
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

// BenchmarkWriteAutoPack is BenchmarkWrite at 10,000 files with automatic
// packing on (gc.auto 6700) and off (gc.auto 0). Run enough writes to cross the
// threshold several times, so the background packs fall inside the timing:
//
//	go test ./vault -run '^$' -bench BenchmarkWriteAutoPack -benchtime 4000x -count 5
func BenchmarkWriteAutoPack(b *testing.B) {
	for _, gcAuto := range []string{"6700", "0"} {
		b.Run("gc.auto="+gcAuto, func(b *testing.B) {
			dir := benchDir(b)
			repo := filepath.Join(dir, "vault.git")
			opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
			v, _, err := vault.Init(context.Background(), repo, opts)
			if err != nil {
				b.Fatal(err)
			}
			vaulttest.Seed(b, v, 10000, 1)
			// Both start packed, as a vault that packed itself all along is: the
			// seed's loose objects would otherwise be a backlog that only the
			// packing side works off, inside the timing.
			if _, err := v.Pack(context.Background()); err != nil {
				b.Fatal(err)
			}
			v.Close()
			if out, err := exec.Command("git", "--git-dir", repo, "config", "gc.auto", gcAuto).CombinedOutput(); err != nil {
				b.Fatalf("git config: %v: %s", err, out)
			}
			if v, err = vault.Open(context.Background(), repo, opts); err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			vaulttest.Writeback()
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				vaulttest.Write(b, v, vaulttest.FilePath(rng.IntN(10000)), vaulttest.Content(i))
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkNaiveGit is the same write done the naive way: encrypt to a file in a
// checkout of 5,000 ciphertext files, then `git add` and `git commit`.
// fsync=default keeps git's defaults; fsync=all makes it as durable as memvault.
// It starts two processes per write, so its like is a whole memvault process
// (cmd/memvault's BenchmarkProcess), not the in-process BenchmarkWrite.
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
