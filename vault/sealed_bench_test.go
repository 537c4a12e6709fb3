package vault_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var sealedRounds = flag.Int("sealed.rounds", 1, "BenchmarkSealed: how many times to run each item in both formats, one after the other")

// BenchmarkSealed puts the sealed format against the plain one, each item in
// both formats one after the other, in one run:
//
//   - write, view, list, log100: a vault of 1,000 files of 1 KB in 10
//     folders: a durable write, a warm view of a file, the listing of
//     /memories two levels deep (every name and size), the first 100 records
//     of the log;
//   - history/first100, history/file: BenchmarkHistory's log of 100,000
//     commits (its first page, and one file's 1,001 commits), in an open vault;
//   - blame: BenchmarkBlame's 500-line file of 2,000 versions, in a freshly
//     opened vault;
//   - grep/cold, grep/warm: BenchmarkGrep's 10,000 files;
//   - sync: BenchmarkSyncDiverged1000's 1,000 x 1,000 diverged sync through a
//     local path, whose receiving side runs in this process (its indexing of
//     the pushed pack counts); sync-daemon: the same through git daemon, where
//     the host's work is git's, in its own processes (the wall time has it,
//     cpu-ms/op does not); sync1k: the sync writing files of 1 KB.
//
// The sealed format's target is at most 1.1 times the plain one's for each.
// On a shared machine compare the two in the same round: -sealed.rounds runs
// each item's plain and sealed benchmarks one after the other that many times
// (-count would run one format's rounds all before the other's), and
// cpu-ms/op, the process's CPU time, moves less with other processes' load
// than the wall time. The histories are built once per process; blame, cold
// grep and sync take a second or more an operation (sync builds its clones for
// each, outside the timing), so give them a count rather than a time:
//
//	go test ./vault -run '^$' -bench '^BenchmarkSealed$/^(write|view|list|log100|history)$' -sealed.rounds 5
//	go test ./vault -run '^$' -bench '^BenchmarkSealed$/^(blame|grep|sync|sync-daemon|sync1k)$' -benchtime 3x -sealed.rounds 5
func BenchmarkSealed(b *testing.B) {
	ctx := context.Background()
	const files = 1000
	formats := []bool{false, true}
	each := func(item string, f func(b *testing.B, sealed bool)) {
		for range *sealedRounds {
			for _, sealed := range formats {
				b.Run(item+"/"+formatName(sealed), func(b *testing.B) { f(b, sealed) })
			}
		}
	}
	each("write", func(b *testing.B, sealed bool) {
		v := seededVaultIn(b, files, 200, sealed)
		rng := rand.New(rand.NewPCG(1, 2))
		lat := make([]time.Duration, 0, b.N)
		defer func() { reportLatency(b, lat) }() // the median leaves out background packing
		defer cpuPerOp(b, vaulttest.CPUTime())
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			vaulttest.Write(b, v, vaulttest.FilePath(rng.IntN(files)), vaulttest.Content(i))
			lat = append(lat, time.Since(start))
		}
	})
	each("view", func(b *testing.B, sealed bool) {
		v := seededVaultIn(b, files, 200, sealed)
		defer cpuPerOp(b, vaulttest.CPUTime())
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
	each("list", func(b *testing.B, sealed bool) {
		v := seededVaultIn(b, files, 200, sealed)
		defer cpuPerOp(b, vaulttest.CPUTime())
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
	each("log100", func(b *testing.B, sealed bool) {
		v := seededVaultIn(b, files, 200, sealed)
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			if _, err := v.Log(ctx, vault.LogOptions{Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	history := func(b *testing.B, sealed bool, o func(h vaulttest.History) (vault.LogOptions, int)) {
		h := longHistoryIn(b, sealed)
		v, err := vault.Open(ctx, h.Dir, vault.Options{IdentityFile: h.IdentityFile})
		if err != nil {
			b.Fatal(err)
		}
		defer v.Close()
		opts, want := o(h)
		log := func() {
			recs, err := v.Log(ctx, opts)
			if err != nil || len(recs) != want {
				b.Fatalf("Log(%+v) = %d records, %v; want %d", opts, len(recs), err, want)
			}
		}
		log() // the history index and the packs' indexes loaded, in both formats
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			log()
		}
	}
	each("history/first100", func(b *testing.B, sealed bool) {
		history(b, sealed, func(vaulttest.History) (vault.LogOptions, int) { return vault.LogOptions{Limit: 100}, 100 })
	})
	each("history/file", func(b *testing.B, sealed bool) {
		history(b, sealed, func(h vaulttest.History) (vault.LogOptions, int) {
			return vault.LogOptions{Path: h.File}, 100_000/h.Files + 1
		})
	})
	each("blame", func(b *testing.B, sealed bool) {
		dir, opts := blameHistoryIn(b, sealed)
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			v, err := vault.Open(ctx, dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			bl, err := v.Blame(ctx, "/memories/long.md", "")
			if err != nil || len(bl.Lines) != 500 {
				b.Fatalf("Blame = %v lines, %v; want 500", len(bl.Lines), err)
			}
			v.Close()
		}
	})
	re := regexp.MustCompile(`memory line 4242 about`)
	grep := func(b *testing.B, v *vault.Vault) {
		res, err := v.Grep(ctx, re, vault.GrepOptions{})
		if err != nil || len(res.Files) != 1 || res.Files[0].Matches != 24 {
			b.Fatalf("Grep = %+v, %v; want one file of 24 matches", res, err)
		}
	}
	each("grep/cold", func(b *testing.B, sealed bool) {
		v := seededVaultIn(b, 10000, 1, sealed)
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			v2, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
			if err != nil {
				b.Fatal(err)
			}
			grep(b, v2)
			v2.Close()
		}
	})
	each("grep/warm", func(b *testing.B, sealed bool) {
		v := seededVaultIn(b, 10000, 1, sealed)
		grep(b, v)
		defer cpuPerOp(b, vaulttest.CPUTime())
		for b.Loop() {
			grep(b, v)
		}
	})
	each("sync", func(b *testing.B, sealed bool) { benchSyncDivergedIn(b, fileRemote, sealed) })
	each("sync-daemon", func(b *testing.B, sealed bool) { benchSyncDivergedIn(b, daemonRemote, sealed) })
	// The same with files of 1 KB, as memories are, where sync's files are
	// of a few bytes: sealed, each of those is padded to 1 KiB, and the
	// blobs take six times the bytes.
	each("sync1k", func(b *testing.B, sealed bool) {
		benchSyncDivergedWith(b, fileRemote, sealed, func(side string, i int) []byte {
			return append([]byte(side), vaulttest.Content(i)...)
		})
	})
}
