package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// importSource writes the folder the import benchmarks read: 10,000 files
// of 1 KB in 100 folders, under dir/src/memories. It returns dir/src.
func importSource(b *testing.B, dir string) string {
	const files = 10_000
	src := filepath.Join(dir, "src", "memories")
	for i := range files {
		d := filepath.Join(src, fmt.Sprintf("d%02d", i%100))
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
		line := fmt.Sprintf("file %d ", i)
		data := line + strings.Repeat("x", 1023-len(line)) + "\n"
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.md", i)), []byte(data), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Dir(src)
}

// BenchmarkImport10k is BenchmarkImportProcess in this process, so that
// go test -cpuprofile sees where an import's time goes.
func BenchmarkImport10k(b *testing.B) {
	dir := b.TempDir()
	src := importSource(b, dir)
	identity := filepath.Join(dir, "identity")
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		flags := []string{"--vault", filepath.Join(dir, fmt.Sprintf("v%d.git", i)), "--identity", identity}
		if _, code, stderr := cliFor(flags...)("", "init"); code != exitOK {
			b.Fatalf("init: %s", stderr)
		}
		b.StartTimer()
		out, code, stderr := cliFor(flags...)("", "import", src)
		if code != exitOK || !strings.Contains(out, "10000 files added") {
			b.Fatalf("import: status %d\n%s%s", code, out, stderr)
		}
	}
}

// BenchmarkImportProcess times a whole `memvault import` process bringing 10,000
// files of 1 KB into a new vault (the target is ≤ 5 s), and reports the loose
// objects it leaves (the target is < 100: the files go in as one pack).
func BenchmarkImportProcess(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "memvault")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	src := filepath.Join(importSource(b, dir), "memories")
	identity := filepath.Join(dir, "identity")
	loose := 0
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		v := filepath.Join(dir, fmt.Sprintf("v%d.git", i))
		mustRun(b, bin, "--vault", v, "--identity", identity, "init")
		b.StartTimer()
		cmd := exec.Command(bin, "--vault", v, "--identity", identity, "import", filepath.Dir(src))
		out := mustRunCmd(b, cmd)
		b.StopTimer()
		if !bytes.Contains(out, []byte("10000 files added")) {
			b.Fatalf("import said:\n%s", out)
		}
		loose = countLoose(b, v)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.StartTimer()
	}
	b.ReportMetric(float64(loose), "loose-objects")
	// The process's CPU time (user and system, all threads) is what a loaded,
	// shared machine changes least; the wall time waits for the other loads.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

func mustRun(b *testing.B, bin string, args ...string) []byte {
	return mustRunCmd(b, exec.Command(bin, args...))
}

func mustRunCmd(b *testing.B, cmd *exec.Cmd) []byte {
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return out
}

// countLoose counts the loose object files of the repository at dir.
func countLoose(b *testing.B, dir string) int {
	fans, err := filepath.Glob(filepath.Join(dir, "objects", "[0-9a-f][0-9a-f]", "*"))
	if err != nil {
		b.Fatal(err)
	}
	return len(fans)
}
