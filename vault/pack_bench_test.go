package vault_test

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var packSizeCommits = flag.Int("packsize.commits", 3000, "BenchmarkPackSize: how many commits on the vault of 10,000 files in 100 folders")

// dirBytes is the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkPackSize is the vault's size against git's for the same history: a
// vault of 10,000 files after 3,000 commits made through the ordinary write
// path (automatic packing on), then gc (Vault.Pack), against `git repack -adf`
// on a copy of it, in the same run. Target: at most 1.5x. pack.window=0 is the
// same with the search for deltas off: every tree whole, as memvault once
// stored them.
//
//	go test ./vault -run '^$' -bench BenchmarkPackSize -benchtime 1x
//
// -packsize.commits sets the history's length (100,000: a long history made
// with automatic packing only, its auto-MiB against git-MiB).
func BenchmarkPackSize(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git binary to compare with")
	}
	for _, window := range []string{"10", "0"} {
		b.Run("pack.window="+window, func(b *testing.B) { packSize(b, window, nil) })
	}
	// The same with the 10,000 files in one folder, a tree of about 400 KB
	// whose every version each commit rewrites, over 1,000 commits.
	b.Run("flat", func(b *testing.B) {
		packSize(b, "10", func(b *testing.B, v *vault.Vault) {
			ctx := context.Background()
			flat := func(i int) string { return fmt.Sprintf("/memories/f%05d.md", i) }
			err := v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
				for i := range 10000 {
					if err := tx.WriteFile(ctx, flat(i), vaulttest.Content(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			for i := 1; i < 1000; i++ {
				vaulttest.Write(b, v, flat(i*7%10000), vaulttest.Content(i))
			}
		})
	})
}

// packSize measures one vault: seeded by seed, or by vaulttest.Seed with
// 10,000 files and 3,000 commits when seed is nil.
func packSize(b *testing.B, window string, seed func(*testing.B, *vault.Vault)) {
	for range b.N {
		dir := benchDir(b)
		repo := filepath.Join(dir, "vault.git")
		v, _, err := vault.Init(context.Background(), repo, vault.Options{IdentityFile: filepath.Join(dir, "identity")})
		if err != nil {
			b.Fatal(err)
		}
		v.Close()
		if out, err := exec.Command("git", "--git-dir", repo, "config", "pack.window", window).CombinedOutput(); err != nil {
			b.Fatalf("git config: %v: %s", err, out)
		}
		if v, err = vault.Open(context.Background(), repo, vault.Options{IdentityFile: filepath.Join(dir, "identity")}); err != nil {
			b.Fatal(err)
		}
		if seed != nil {
			seed(b, v)
		} else {
			vaulttest.Seed(b, v, 10000, *packSizeCommits)
		}
		if err := v.Close(); err != nil { // waits for a background pack
			b.Fatal(err)
		}
		auto := dirBytes(b, filepath.Join(repo, "objects"))
		if v, err = vault.Open(context.Background(), repo, vault.Options{IdentityFile: filepath.Join(dir, "identity")}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res, err := v.Pack(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		gcTime := time.Since(start)
		v.Close()
		cp := filepath.Join(dir, "copy.git")
		if out, err := exec.Command("cp", "-a", repo, cp).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v\n%s", err, out)
		}
		start = time.Now()
		if out, err := exec.Command("git", "-c", "pack.window=10", "-c", "pack.depth=50", "--git-dir", cp, "repack", "-adf", "-q").CombinedOutput(); err != nil {
			b.Fatalf("git repack -adf: %v\n%s", err, out)
		}
		gitTime := time.Since(start)
		git := dirBytes(b, filepath.Join(cp, "objects"))
		if out, err := exec.Command("git", "--git-dir", repo, "fsck", "--strict").CombinedOutput(); err != nil {
			b.Fatalf("git fsck --strict: %v\n%s", err, out)
		}
		b.ReportMetric(float64(auto)/(1<<20), "auto-MiB")
		b.ReportMetric(float64(res.After)/(1<<20), "gc-MiB")
		b.ReportMetric(float64(git)/(1<<20), "git-MiB")
		b.ReportMetric(float64(res.After)/float64(git), "gc/git")
		b.ReportMetric(gcTime.Seconds(), "gc-s")
		b.ReportMetric(gitTime.Seconds(), "git-repack-s")
	}
}

// BenchmarkWriteDeltas is BenchmarkWriteAutoPack's write at 10,000 files with
// automatic packing on, and the search for deltas in the packs it merges on
// (pack.window 10, git's default) and off (pack.window 0), in one run. Run
// enough writes that the background merges fall inside the timing:
//
//	go test ./vault -run '^$' -bench BenchmarkWriteDeltas -benchtime 3000x -count 3
func BenchmarkWriteDeltas(b *testing.B) {
	for _, window := range []string{"10", "0"} {
		b.Run("pack.window="+window, func(b *testing.B) {
			dir := benchDir(b)
			repo := filepath.Join(dir, "vault.git")
			opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
			v, _, err := vault.Init(context.Background(), repo, opts)
			if err != nil {
				b.Fatal(err)
			}
			vaulttest.Seed(b, v, 10000, 1)
			if _, err := v.Pack(context.Background()); err != nil {
				b.Fatal(err)
			}
			v.Close()
			if out, err := exec.Command("git", "--git-dir", repo, "config", "pack.window", window).CombinedOutput(); err != nil {
				b.Fatalf("git config: %v: %s", err, out)
			}
			if v, err = vault.Open(context.Background(), repo, opts); err != nil {
				b.Fatal(err)
			}
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
			v.Close()
			reportLatency(b, lat)
			b.ReportMetric(float64(dirBytes(b, filepath.Join(repo, "objects")))/(1<<20), "objects-MiB")
		})
	}
}

// BenchmarkReadDeltas is what deltas cost a reader: log -S over 10,000
// commits (each overwriting a 1 KB file of 100), which reads every commit's
// trees, in a freshly opened vault after gc, with the trees stored as deltas
// (pack.window 10) and whole (0), in one run.
//
//	go test ./vault -run '^$' -bench BenchmarkReadDeltas -count 3
func BenchmarkReadDeltas(b *testing.B) {
	for _, window := range []string{"10", "0"} {
		b.Run("pack.window="+window, func(b *testing.B) {
			dir := benchDir(b)
			repo := filepath.Join(dir, "vault.git")
			opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
			v, _, err := vault.Init(context.Background(), repo, opts)
			if err != nil {
				b.Fatal(err)
			}
			v.Close()
			if out, err := exec.Command("git", "--git-dir", repo, "config", "pack.window", window).CombinedOutput(); err != nil {
				b.Fatalf("git config: %v: %s", err, out)
			}
			if v, err = vault.Open(context.Background(), repo, opts); err != nil {
				b.Fatal(err)
			}
			vaulttest.Seed(b, v, 100, 10000)
			if _, err := v.Pack(context.Background()); err != nil {
				b.Fatal(err)
			}
			v.Close()
			size := dirBytes(b, filepath.Join(repo, "objects"))
			for b.Loop() {
				v, err := vault.Open(context.Background(), repo, opts)
				if err != nil {
					b.Fatal(err)
				}
				recs, err := v.Log(context.Background(), vault.LogOptions{Pickaxe: "memory line 5000 about"})
				if err != nil || len(recs) != 2 {
					b.Fatalf("Log(-S) = %d records, %v; want 2", len(recs), err)
				}
				v.Close()
			}
			b.ReportMetric(float64(size)/(1<<20), "objects-MiB")
		})
	}
}
