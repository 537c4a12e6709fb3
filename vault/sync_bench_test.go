package vault_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkSyncDiverged1000 times one sync of two clones that are 1,000 commits
// apart each way (each side edits its own 50 files 1,000 times): fetch, merge
// of 100 changed files, push. Target: ≤ 5 s. The remote is a local path (served
// in process by go-git), git daemon, or git http-backend: the last two are git
// itself on the server side.
func BenchmarkSyncDiverged1000(b *testing.B) {
	for _, tr := range []struct {
		name   string
		remote func(testing.TB) string
	}{{"file", fileRemote}, {"git-daemon", daemonRemote}, {"http-backend", httpRemote}} {
		b.Run(tr.name, func(b *testing.B) { benchSyncDiverged(b, tr.remote) })
	}
}

func benchSyncDiverged(b *testing.B, remote func(testing.TB) string) {
	benchSyncDivergedIn(b, remote, false)
}

func benchSyncDivergedIn(b *testing.B, remote func(testing.TB) string, sealed bool) {
	benchSyncDivergedWith(b, remote, sealed, nil)
}

// benchSyncDivergedWith is benchSyncDivergedIn with the i-th write of each
// side (side "a" or "b") writing data(side, i) (see vaulttest.Diverge).
func benchSyncDivergedWith(b *testing.B, remote func(testing.TB) string, sealed bool, data func(side string, i int) []byte) {
	const commits, files = 1000, 50
	var cpu time.Duration // of the syncs timed: other processes' load moves it less than the wall clock
	defer func() { b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op") }()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		newAt := vaulttest.NewPlainAt
		if sealed {
			newAt = vaulttest.NewSealedAt
		}
		va, opts := newAt(b, dir)
		url := remote(b)
		if err := va.AddRemote("origin", url); err != nil {
			b.Fatal(err)
		}
		if _, err := va.Sync(ctx, vault.SyncOptions{}); err != nil {
			b.Fatal(err)
		}
		vb, _, err := vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
		if err != nil {
			b.Fatal(err)
		}
		vaulttest.Diverge(b, va, vb, commits, files, data)
		// The syncing side starts from packed storage, as a sync run in a new
		// process does: a journal under the flush threshold (the plain
		// format's 1,000 commits) would otherwise be compressed into the push
		// inside the timing, where one that crossed it (the sealed format's
		// bigger trees) was packed during the writes.
		if err := vb.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := vaulttest.CPUTime()
		res, err := vb.Sync(ctx, vault.SyncOptions{})
		cpu += vaulttest.CPUTime() - start
		b.StopTimer()
		if err != nil || res.Action != "merge" {
			b.Fatalf("Sync = %+v, %v; want a merge", res, err)
		}
		vb.Close()
		va.Close()
		b.StartTimer()
	}
}

// BenchmarkSyncOneCommit times the sync of one new commit on top of a long
// shared history (5,000 commits over 50 files): a push from one clone, then a
// fetch and fast-forward on the other. Its cost should follow the change, not
// the history.
func BenchmarkSyncOneCommit(b *testing.B) {
	const history, files = 5000, 50
	dir := b.TempDir()
	va, opts := vaulttest.NewAt(b, dir)
	url := fileRemote(b)
	if err := va.AddRemote("origin", url); err != nil {
		b.Fatal(err)
	}
	for i := range history {
		vaulttest.Write(b, va, fmt.Sprintf("/memories/%d.md", i%files), fmt.Appendf(nil, "v %d\n", i))
	}
	if _, err := va.Sync(ctx, vault.SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	vb, _, err := vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer vb.Close()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		vaulttest.Write(b, va, "/memories/new.md", fmt.Appendf(nil, "n %d\n", i))
		b.StartTimer()
		if res, err := va.Sync(ctx, vault.SyncOptions{}); err != nil || !res.Pushed {
			b.Fatalf("push: %+v, %v", res, err)
		}
		if res, err := vb.Sync(ctx, vault.SyncOptions{}); err != nil || res.Action != "fast-forward" {
			b.Fatalf("pull: %+v, %v", res, err)
		}
	}
}

// BenchmarkSyncAdmission is BenchmarkSyncDiverged1000 through a local path,
// with sync's admission check of what arrives on and off, measured in one run
// (with -count the two alternate): the check must add at most 10%.
func BenchmarkSyncAdmission(b *testing.B) {
	for _, tc := range []struct {
		name      string
		off, tree bool
	}{{"admit", false, false}, {"admit-without-tree-check", false, true}, {"no-admit", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			vault.SkipAdmission(tc.off)
			vault.SkipArrivalTree(tc.tree)
			defer vault.SkipAdmission(false)
			defer vault.SkipArrivalTree(false)
			benchSyncDiverged(b, fileRemote)
		})
	}
}

// BenchmarkAdmit1000 times the admission check alone on what
// BenchmarkSyncDiverged1000's sync fetches (1,000 new commits), each time in a
// freshly opened vault, so no tree is cached: what the check adds to that sync.
func BenchmarkAdmit1000(b *testing.B) {
	benchFetched1000(b, vault.AdmitFetched)
}

// BenchmarkArrivalTree1000 is BenchmarkAdmit1000 for the other half of the
// check: the tree main would take, judged against the tree the clone holds.
func BenchmarkArrivalTree1000(b *testing.B) {
	benchFetched1000(b, vault.ArrivalTreeFetched)
}

// benchFetched1000 times check on what BenchmarkSyncDiverged1000's sync
// fetches, each time in a freshly opened vault.
func benchFetched1000(b *testing.B, check func(context.Context, *vault.Vault, gitlog.Hash) (int, error)) {
	const commits, files = 1000, 50
	dir := b.TempDir()
	va, opts := vaulttest.NewAt(b, dir)
	url := fileRemote(b)
	if err := va.AddRemote("origin", url); err != nil {
		b.Fatal(err)
	}
	if _, err := va.Sync(ctx, vault.SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	bdir := filepath.Join(dir, "b.git")
	vb, _, err := vault.Clone(ctx, url, bdir, opts, vault.CloneOptions{})
	if err != nil {
		b.Fatal(err)
	}
	vaulttest.Diverge(b, va, vb, commits, files, nil)
	theirs, err := vault.FetchForAdmit(ctx, vb, "origin")
	if err != nil {
		b.Fatal(err)
	}
	vb.Close()
	for b.Loop() {
		b.StopTimer()
		v, err := vault.Open(ctx, bdir, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := check(ctx, v, theirs)
		b.StopTimer()
		if err != nil || n != 0 {
			b.Fatalf("admit = %d refused, %v", n, err)
		}
		v.Close()
		b.StartTimer()
	}
}

// BenchmarkSigning measures what signing every commit and checking every
// arriving signature cost, on and off in one run (with -count the two
// alternate): a durable write on a 1,000-file vault, and the 1,000 x 1,000
// diverged sync through a local path. Each must add at most 10%.
//
//	go test ./vault -run '^$' -bench BenchmarkSigning -count 5
func BenchmarkSigning(b *testing.B) {
	for _, off := range []bool{false, true} {
		name := "signed"
		if off {
			name = "unsigned"
		}
		b.Run("write/"+name, func(b *testing.B) {
			vault.SkipSigning(off)
			defer vault.SkipSigning(false)
			v := seededVault(b, 1000, 100)
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				vaulttest.Write(b, v, vaulttest.FilePath(i%1000), vaulttest.Content(i))
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
		b.Run("sync/"+name, func(b *testing.B) {
			vault.SkipSigning(off)
			defer vault.SkipSigning(false)
			benchSyncDiverged(b, fileRemote)
		})
	}
}

// BenchmarkTrust measures what the membership checks (admission's trust
// rules: removed writers, writers pinned by a clone) add, on and off in one
// run: a clone of a 10,000-commit history pinned to its writer, and the
// 1,000 x 1,000 diverged sync through a local path, each in the sealed
// format (the default).
//
//	go test ./vault -run '^$' -bench BenchmarkTrust -count 3
func BenchmarkTrust(b *testing.B) {
	dir := b.TempDir()
	src, opts := vaulttest.NewSealedAt(b, dir)
	vaulttest.Seed(b, src, 200, 10000)
	url := filepath.Join(dir, "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", url).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	if err := src.AddRemote("origin", url); err != nil {
		b.Fatal(err)
	}
	if _, err := src.Sync(ctx, vault.SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	me, err := src.SigningWriter()
	if err != nil {
		b.Fatal(err)
	}
	for _, off := range []bool{false, true} {
		name := map[bool]string{false: "checked", true: "unchecked"}[off]
		b.Run("clone10000/"+name, func(b *testing.B) {
			vault.SkipTrust(off)
			defer vault.SkipTrust(false)
			var cpu time.Duration
			defer func() { b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op") }()
			for i := 0; b.Loop(); i++ {
				start := vaulttest.CPUTime()
				v, _, err := vault.Clone(ctx, url, filepath.Join(b.TempDir(), "c.git"), opts, vault.CloneOptions{ExpectWriters: []string{me.Fingerprint}})
				cpu += vaulttest.CPUTime() - start
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				v.Close()
				b.StartTimer()
			}
		})
		b.Run("sync/"+name, func(b *testing.B) {
			vault.SkipTrust(off)
			defer vault.SkipTrust(false)
			benchSyncDivergedIn(b, fileRemote, true)
		})
	}
}
