package vault_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/memvault/memvault/vault"
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

func content(i int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("memory line %d about the user's project.\n", i), 24)) // ~1 KB
}

// filePath spreads files over directories of 100, as a memory tree would be.
func filePath(i int) string { return fmt.Sprintf("/memories/d%03d/f%04d.md", i/100, i) }

// seededVault returns a vault of files 1 KB files and at least commits commits.
func seededVault(b *testing.B, files, commits int) *vault.Vault {
	key := fmt.Sprint(files, commits)
	if v, ok := benchVaults.Load(key); ok {
		return v.(*vault.Vault)
	}
	dir, err := os.MkdirTemp("", "memvault-bench-")
	if err != nil {
		b.Fatal(err)
	}
	benchDirs = append(benchDirs, dir)
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	err = v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
		for i := range files {
			if err := tx.WriteFile(ctx, filePath(i), content(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i < commits; i++ {
		write1(b, v, filePath(i%files), content(i))
	}
	benchVaults.Store(key, v)
	syscall.Sync() // let seeding's writeback finish before anything is timed
	return v
}

func write1(b *testing.B, v *vault.Vault, p string, data []byte) {
	err := v.Update(context.Background(), vault.Meta{Command: "str_replace", ToolUseID: "toolu_bench"}, func(tx *vault.Tx) error {
		return tx.WriteFile(context.Background(), p, data)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// reportLatency adds the median and 90th percentile of per-operation times.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkWrite is one durable write command (overwrite of a 1 KB file at depth
// two) in process, on vaults of growing size. Target: p50 ≤ 3 ms at 10,000 files
// and 10,000 commits, and ≤ 1.5× the 100-file figure.
func BenchmarkWrite(b *testing.B) {
	for _, size := range []struct{ files, commits int }{{100, 100}, {5000, 100}, {10000, 10000}} {
		b.Run(fmt.Sprintf("files=%d/commits=%d", size.files, size.commits), func(b *testing.B) {
			v := seededVault(b, size.files, size.commits)
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				write1(b, v, filePath(rng.IntN(size.files)), content(i))
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkNaiveGit is the same write done the naive way: encrypt to a file in a
// checkout of ciphertext files, then `git add` and `git commit`, at 5,000 files.
// fsync=default leaves git's own defaults; fsync=all makes it as durable as
// memvault's write.
func BenchmarkNaiveGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git binary not on PATH")
	}
	const files = 5000
	id, _ := age.GenerateX25519Identity()
	dir := b.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	put := func(i int, data []byte) string {
		rel := "memories" + strings.TrimPrefix(filePath(i), "/memories")
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		w, _ := age.Encrypt(f, id.Recipient())
		w.Write(data)
		w.Close()
		f.Close()
		return rel
	}
	git("init", "-q", "-b", "main")
	for i := range files {
		put(i, content(i))
	}
	git("add", "-A")
	git("commit", "-q", "-m", "import")
	for _, fsync := range []string{"default", "all"} {
		b.Run("files=5000/fsync="+fsync, func(b *testing.B) {
			if fsync == "all" {
				git("config", "core.fsync", "all")
			}
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				rel := put(rng.IntN(files), content(i))
				git("add", rel)
				git("commit", "-q", "-m", "str_replace /"+rel)
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}
