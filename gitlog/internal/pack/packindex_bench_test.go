package pack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
)

// BenchmarkIndexPackChain indexes the pack of a file edited 300 times, one
// long chain of deltas (see gitChainPack), with IndexPack and with git
// index-pack on the same file, in the same run, and reports the ratio of
// their times (the target: at most 2), and the memory IndexPack takes: the
// most resolved content it held, and the peak of the heap above where it
// began.
func BenchmarkIndexPackChain(b *testing.B) {
	git := gittest.Git(b)
	pack, longest := gitChainPack(b, 300)
	idx := filepath.Join(b.TempDir(), "pack.idx")
	f, err := os.Open(pack)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	var ours, theirs time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, _, err := IndexPack(ctx, f); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		os.Remove(idx)
		if out, err := exec.Command(git, "index-pack", "-o", idx, pack).CombinedOutput(); err != nil {
			b.Fatalf("git index-pack: %v\n%s", err, out)
		}
		ours += t1.Sub(t0)
		theirs += time.Since(t1)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(ours)/float64(theirs), "ratio")
	b.ReportMetric(float64(ours.Microseconds())/1e3/n, "ours-ms")
	b.ReportMetric(float64(theirs.Microseconds())/1e3/n, "git-ms")
	b.ReportMetric(float64(longest), "chain")

	// Memory, on one more index outside the timing: the heap sampled as it
	// goes, from a collected start.
	if _, err := f.Seek(0, 0); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	start := heap()
	peak := start
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, heap())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	x := NewIndexer(DeltaCacheBudget)
	_, _, err = x.Index(ctx, f)
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(x.stats.peakHeld), "held-B")
	b.ReportMetric(float64(peak-start), "peak-heap-B")
}
