package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkProcess compares whole processes at 5,000 files: one `memvault tool`
// create command against the naive way, encrypting a file into a git checkout
// and running `git add` and `git commit`. The target for memvault tool is
// ≤ 30 ms; the naive processes are a reference. Whole process against whole
// process: each side pays its start-up. (In process against in process is
// vault's BenchmarkWrite against BenchmarkGitInProcess.)
func BenchmarkProcess(b *testing.B) {
	const files = 5000
	dir := b.TempDir()
	bin := filepath.Join(dir, "memvault")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		b.Fatal(err)
	}
	vaulttest.Seed(b, v, files, 1)
	v.Close()
	naive := vaulttest.NewNaive(b, filepath.Join(dir, "naive"), files)

	b.Run("memvault-tool/files=5000", func(b *testing.B) {
		timed(b, func(i int) {
			in, _ := json.Marshal(map[string]string{"command": "create", "path": newPath(i), "file_text": string(vaulttest.Content(i))})
			cmd := exec.Command(bin, "--vault", filepath.Join(dir, "vault.git"), "--identity", opts.IdentityFile, "tool", "--tool-use-id", "toolu_bench")
			cmd.Stdin = bytes.NewReader(in)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("memvault tool: %v\n%s", err, out)
			}
		})
	})
	b.Run("git-add-commit/files=5000", func(b *testing.B) {
		timed(b, func(i int) { naive.Write(newPath(i), vaulttest.Content(i)) })
	})
}

var runs int

// newPath is a path no earlier run of the benchmark used, at depth two.
func newPath(i int) string {
	return fmt.Sprintf("/memories/d%03d/new-%d-%d.md", i%50, runs, i)
}

func timed(b *testing.B, op func(i int)) {
	runs++
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		op(i)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
