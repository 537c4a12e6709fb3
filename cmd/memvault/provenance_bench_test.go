package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// provenanceVault returns the vault dir/name.git, made by seed when missing.
// With MEMVAULT_BENCH_DIR set, the vaults are kept there between runs (seeding
// 10,000 commits takes minutes), and can be timed by hand with the same binary.
func provenanceVault(b *testing.B, dir, name string, seed func(v *vault.Vault)) (vaultDir, identity string) {
	vaultDir, identity = filepath.Join(dir, name+".git"), filepath.Join(dir, "identity")
	if _, err := os.Stat(filepath.Join(vaultDir, "memvault-ready")); err == nil {
		return vaultDir, identity
	}
	os.RemoveAll(vaultDir)
	v, _, err := vault.Init(context.Background(), vaultDir, vault.Options{IdentityFile: identity})
	if err != nil {
		b.Fatal(err)
	}
	seed(v)
	v.Close()
	if err := os.WriteFile(filepath.Join(vaultDir, "memvault-ready"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	vaulttest.Writeback()
	return vaultDir, identity
}

// BenchmarkProvenanceProcess times whole memvault processes answering
// questions about content, against the targets: blame of a 500-line file with
// 2,000 versions ≤ 1 s; grep over 10,000 files of 1 KB ≤ 1 s; log -S over
// 10,000 commits ≤ 3 s. Beside the wall time it reports the CPU time of the
// process (user and system, from its rusage), which a busy machine does not
// inflate; the work is spread over the cores, so on an idle machine the wall
// time is below the CPU time.
func BenchmarkProvenanceProcess(b *testing.B) {
	dir := os.Getenv("MEMVAULT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	bin := filepath.Join(dir, "memvault")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	blameV, id := provenanceVault(b, dir, "blame", func(v *vault.Vault) { vaulttest.EditedFile(b, v, "/memories/long.md", 500, 2000) })
	grepV, _ := provenanceVault(b, dir, "grep", func(v *vault.Vault) { vaulttest.Seed(b, v, 10000, 1) })
	logV, _ := provenanceVault(b, dir, "log", func(v *vault.Vault) { vaulttest.Seed(b, v, 100, 10000) })
	for _, tc := range []struct {
		name  string
		args  []string
		lines int
	}{
		{"blame/lines=500/versions=2000", []string{"--vault", blameV, "blame", "long.md"}, 500},
		{"grep/files=10000", []string{"--vault", grepV, "grep", "memory line 4242 about"}, 24},
		{"log-S/commits=10000", []string{"--vault", logV, "log", "-S", "memory line 5000 about"}, 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(bin, append([]string{"--identity", id}, tc.args...)...)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("memvault %v: %v", tc.args, err)
				}
				if n := bytes.Count(out, []byte("\n")); n != tc.lines {
					b.Fatalf("memvault %v printed %d lines, want %d", tc.args, n, tc.lines)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
