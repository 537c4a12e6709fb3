package bridges_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var (
	serveRounds   = flag.Int("serve.rounds", 9, "interleaved rounds of BenchmarkServeVsSDK")
	serveGroups   = flag.Int("serve.groups", 50, "create/str_replace/view/view groups per round of BenchmarkServeVsSDK")
	serveBaseline = flag.String("serve.baseline", "", "another memvault `binary` (an older build) to run in the same rounds of BenchmarkServeVsSDK")
)

// seedFiles is the size of the tree the mix runs on.
const seedFiles = 5000

// BenchmarkServeVsSDK runs the same mix of memory commands through `memvault
// serve` and through the TypeScript SDK's local-filesystem memory tool (plain
// files, no encryption, no history), each a long-lived process answering the
// same JSON lines (testdata/sdkserve.js for the SDK), on the same 5,000-file
// tree. Each group of the mix creates a file, edits it with str_replace, views
// it, and views one of the seeded files. The backends take turns, round by
// round, so both see the same load from whatever else runs on the machine;
// ratio is the median over rounds of memvault's time per command over the
// SDK's. Per-command p50 and p99 are over all rounds. Every answer is checked,
// and the two backends must give the same text.
//
//	go test ./agent/bridges -run '^$' -bench ServeVsSDK -benchtime 1x
//
// With -serve.baseline BIN a third backend, another memvault build, takes its
// turn in the same rounds (before and after a change, in one run).
func BenchmarkServeVsSDK(b *testing.B) {
	dir := installTypeScript(b)
	harness, err := os.ReadFile(filepath.Join("testdata", "sdkserve.js"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sdkserve.js"), harness, 0o644); err != nil {
		b.Fatal(err)
	}
	tree := b.TempDir()
	env := seedVault(b, filepath.Join(tree, "memvault"))
	seedFolder(b, filepath.Join(tree, "sdk"))

	backends := []*backend{
		startBackend(b, "memvault", env, filepath.Join(memvaultDir, "memvault"), "serve"),
		startBackend(b, "sdk", os.Environ(), "node", filepath.Join(dir, "sdkserve.js"), filepath.Join(tree, "sdk")),
	}
	if *serveBaseline != "" {
		// A vault of its own: the mix creates the same paths in every backend.
		baseEnv := seedVault(b, filepath.Join(tree, "baseline"))
		backends = append(backends, startBackend(b, "baseline", baseEnv, *serveBaseline, "serve"))
	}
	// Warm up: node compiles, both fill their caches of the directory tree.
	for _, be := range backends {
		be.group(b, -1, 0)
	}
	sameAnswers(b, backends)
	for _, be := range backends {
		be.reset()
	}
	var ratios, baseRatios []float64
	for i := 0; i < b.N; i++ {
		for r := range *serveRounds {
			order := slices.Clone(backends)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, be := range order {
				be.round = 0
				for g := range *serveGroups {
					be.group(b, i*(*serveRounds)+r, g)
				}
			}
			sameAnswers(b, backends)
			ratios = append(ratios, float64(backends[0].round)/float64(backends[1].round))
			if len(backends) > 2 {
				baseRatios = append(baseRatios, float64(backends[2].round)/float64(backends[1].round))
			}
		}
	}
	b.ReportMetric(median(ratios), "ratio")
	if baseRatios != nil {
		b.ReportMetric(median(baseRatios), "baseline-ratio")
	}
	for _, be := range backends {
		be.report(b)
	}
}

// sameAnswers fails unless the backends gave the same answers to their last group.
func sameAnswers(b *testing.B, backends []*backend) {
	for _, be := range backends[1:] {
		if !slices.Equal(be.last, backends[0].last) {
			b.Fatalf("%s answered %q\n%s answered %q", backends[0].name, backends[0].last, be.name, be.last)
		}
	}
}

// seedVault makes a vault of seedFiles files in dir and returns the environment
// that points memvault at it.
func seedVault(b *testing.B, dir string) []string {
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
	v, _, err := vault.Init(context.Background(), filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		b.Fatal(err)
	}
	vaulttest.Seed(b, v, seedFiles, 1)
	if err := v.Close(); err != nil {
		b.Fatal(err)
	}
	return append(os.Environ(), "MEMVAULT_DIR="+filepath.Join(dir, "vault.git"), "MEMVAULT_IDENTITY="+opts.IdentityFile)
}

// seedFolder writes the same files as plain files under base/memories.
func seedFolder(b *testing.B, base string) {
	for i := range seedFiles {
		p := filepath.Join(base, filepath.FromSlash(vaulttest.FilePath(i)[1:]))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, vaulttest.Content(i), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// backend is one process answering JSON lines, and the latencies it showed.
type backend struct {
	name  string
	in    io.Writer
	out   *bufio.Reader
	lat   map[string][]time.Duration // by command
	round time.Duration              // this round's total
	last  []string                   // the answers of the last group, to compare
}

func startBackend(b *testing.B, name string, env []string, prog string, args ...string) *backend {
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Skipf("skipped: cannot start %s: %v", prog, err)
	}
	b.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("%s: %v\n%s", name, err, stderr.Bytes())
		}
	})
	be := &backend{name: name, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	be.reset()
	return be
}

func (be *backend) reset() { be.lat = map[string][]time.Duration{} }

// group runs group g of round r: create a file, edit it, view it, view a seeded file.
func (be *backend) group(b *testing.B, r, g int) {
	p := fmt.Sprintf("/memories/d%03d/new-%d-%d.md", g%50, r+1, g)
	seeded := vaulttest.FilePath((g*7919 + r*131 + seedFiles) % seedFiles)
	text := string(vaulttest.Content(g)) + "status: TODO\n"
	be.last = be.last[:0]
	be.call(b, map[string]any{"command": "create", "path": p, "file_text": text}, "File created successfully at: "+p)
	be.call(b, map[string]any{"command": "str_replace", "path": p, "old_str": "status: TODO", "new_str": "status: DONE"},
		"The memory file has been edited.")
	be.call(b, map[string]any{"command": "view", "path": p}, "Here's the content of "+p)
	be.call(b, map[string]any{"command": "view", "path": seeded}, "Here's the content of "+seeded)
}

// call sends one request and reads its answer, which must not be an error and
// must begin with want.
func (be *backend) call(b *testing.B, input map[string]any, want string) {
	line, err := json.Marshal(map[string]any{"id": 1, "input": input})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := be.in.Write(append(line, '\n')); err != nil {
		b.Fatalf("%s: write: %v", be.name, err)
	}
	ans, err := be.out.ReadBytes('\n')
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s: read: %v", be.name, err)
	}
	var a struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal(ans, &a); err != nil || a.IsError || !strings.HasPrefix(a.Content, want) {
		b.Fatalf("%s: %s answered %s (%v), want %q…", be.name, line, ans, err, want)
	}
	cmd := input["command"].(string)
	be.lat[cmd] = append(be.lat[cmd], d)
	be.round += d
	be.last = append(be.last, a.Content)
}

// report reports the backend's time per command and each command's p50 and p99.
func (be *backend) report(b *testing.B) {
	var all []time.Duration
	var lines []string
	for _, cmd := range []string{"create", "str_replace", "view"} {
		lat := slices.Sorted(slices.Values(be.lat[cmd]))
		all = append(all, lat...)
		p50, p99 := ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
		b.ReportMetric(p50, be.name+"-"+cmd+"-p50-ms")
		b.ReportMetric(p99, be.name+"-"+cmd+"-p99-ms")
		lines = append(lines, fmt.Sprintf("%s %.3f/%.3f", cmd, p50, p99))
	}
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	mean := ms(sum) / float64(len(all))
	b.ReportMetric(mean, be.name+"-ms/cmd")
	b.Logf("%-8s %.3f ms per command; p50/p99 ms: %s", be.name, mean, strings.Join(lines, ", "))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
