package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkSyncProcess times `memvault sync` as a user runs it, a whole
// process, in both formats: a clone 1,000 commits behind and 1,000 ahead of a
// local-path remote (50 files a side) fetches, merges, pushes and exits,
// which includes the merge of packs its exit may run. Each iteration syncs a
// fresh copy of the same two vaults, plain then sealed, and reports each
// format's median wall time, its CPU, and the median of the sealed/plain
// ratios taken iteration by iteration (the machine's drift cancels in a pair):
//
//	go test ./cmd/memvault -run '^$' -bench BenchmarkSyncProcess -benchtime 9x
//
// vault's BenchmarkSealed/sync times the sync alone, in process.
func BenchmarkSyncProcess(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "memvault")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	formats := []string{"plain", "sealed"}
	identity := map[string]string{}
	for _, f := range formats {
		identity[f] = divergedPair(b, filepath.Join(dir, f), f == "plain")
	}
	wall := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range formats {
			b.StopTimer()
			run, err := os.MkdirTemp(dir, "run-")
			if err != nil {
				b.Fatal(err)
			}
			mustRun(b, "cp", "-a", filepath.Join(dir, f, "b.git"), filepath.Join(dir, f, "remote.git"), run)
			mustRun(b, "git", "--git-dir", filepath.Join(run, "b.git"), "config", "remote.origin.url", "file://"+filepath.Join(run, "remote.git"))
			// The copy's bytes go to disk now: the first fsync of the sync
			// would otherwise write them out too (ext4 commits the data of
			// every file in its journal's transaction), more for the
			// bigger sealed vault.
			mustRun(b, "sync")
			b.StartTimer()
			cmd := exec.Command(bin, "--vault", filepath.Join(run, "b.git"), "--identity", identity[f], "sync")
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err != nil {
				b.Fatalf("memvault sync (%s): %v\n%s", f, err, out)
			}
			wall[f] = append(wall[f], took)
			cpu[f] = append(cpu[f], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		ratios = append(ratios, float64(wall["sealed"][i])/float64(wall["plain"][i]))
	}
	b.StopTimer()
	for _, f := range formats {
		b.ReportMetric(ms(median(wall[f])), f+"-ms")
		b.ReportMetric(ms(median(cpu[f])), f+"-cpu-ms")
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "sealed/plain")
}

// divergedPair makes, under dir, a remote (remote.git) and a clone of it
// (b.git) that is 1,000 commits ahead of it and 1,000 behind, and returns
// the identity file that opens and signs both.
func divergedPair(b *testing.B, dir string, plain bool) string {
	const commits, files = 1000, 50
	newAt := vaulttest.NewSealedAt
	if plain {
		newAt = vaulttest.NewPlainAt
	}
	va, opts := newAt(b, filepath.Join(dir, "a"))
	remote := filepath.Join(dir, "remote.git")
	mustRun(b, "git", "init", "-q", "--bare", remote)
	if err := va.AddRemote("origin", "file://"+remote); err != nil {
		b.Fatal(err)
	}
	vaulttest.MustSync(b, va)
	vb, _, err := vault.Clone(context.Background(), "file://"+remote, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
	if err != nil {
		b.Fatal(err)
	}
	vaulttest.Diverge(b, va, vb, commits, files, nil)
	for _, v := range []*vault.Vault{va, vb} {
		if err := v.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return opts.IdentityFile
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
