//go:build linux

package mount_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkCp1000 is the cost of the mount against a plain folder, in one run:
// cp of 1,000 small files (200 bytes to 1 KB) into a new folder, each file one
// commit on the mount, then reading them all back with cat. The metrics are
// milliseconds for the 1,000 files, per phase.
//
//	go test ./agent/mount -run '^$' -bench Cp1000 -benchtime 3x -count 5
func BenchmarkCp1000(b *testing.B) {
	src := filepath.Join(b.TempDir(), "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		body := fmt.Sprintf("# note %d\n%s\n", i, make([]byte, 200+i%800))
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("n%04d.md", i)), []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	plain := b.TempDir()
	m := mountVault(b, vaulttest.New(b), mount.Options{})
	runs := 0 // -count reruns each sub-benchmark in the same folders: every copy gets a new name
	for _, target := range []struct{ name, dir string }{{"plain", plain}, {"mount", m.Dir()}} {
		b.Run(target.name, func(b *testing.B) {
			var cp, read time.Duration
			for i := 0; i < b.N; i++ {
				runs++
				dest := filepath.Join(target.dir, fmt.Sprintf("run%d", runs))
				start := time.Now()
				if out, err := exec.Command("cp", "-r", src, dest).CombinedOutput(); err != nil {
					b.Fatalf("cp: %v\n%s", err, out)
				}
				cp += time.Since(start)
				start = time.Now()
				if out, err := exec.Command("sh", "-c", "cat \"$0\"/* > /dev/null", dest).CombinedOutput(); err != nil {
					b.Fatalf("cat: %v\n%s", err, out)
				}
				read += time.Since(start)
			}
			b.ReportMetric(float64(cp.Milliseconds())/float64(b.N), "cp-ms")
			b.ReportMetric(float64(read.Milliseconds())/float64(b.N), "read-ms")
		})
	}
}
