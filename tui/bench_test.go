package tui

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"filippo.io/age"
	"github.com/charmbracelet/x/ansi"

	"github.com/memvault/memvault/vault"
)

// The large vault of the design's target: 10,000 files and 100,000 commits.
const (
	benchFiles   = 10000
	benchCommits = 100000
)

var (
	bigOnce sync.Once
	bigDir  string
	bigOpts vault.Options
	bigErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{bigDir, binDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// bigVault returns the options and directory of the large vault, built once per
// process (so across -count runs): git fast-import writes its history in one
// pack in seconds, where as many durable commits would take minutes. Its blobs
// are real age ciphertext to the vault's recipient, a few hundred of them
// reused, and its messages have memvault's trailers.
func bigVault(b *testing.B) (string, vault.Options) {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git binary not on PATH: needed to build the large vault quickly")
	}
	bigOnce.Do(func() {
		start := time.Now()
		bigDir, bigOpts, bigErr = buildBigVault()
		b.Logf("built the large vault in %v", time.Since(start).Round(time.Millisecond))
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return filepath.Join(bigDir, "vault.git"), bigOpts
}

func buildBigVault() (string, vault.Options, error) {
	dir, err := os.MkdirTemp("", "memvault-tui-bench-")
	if err != nil {
		return "", vault.Options{}, err
	}
	c := &clock{t: epoch}
	// Plain: fast-import below writes plain names and messages, which a
	// sealed tree would refuse.
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Now: c.now, Plain: true}
	ctx := context.Background()
	v, res, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		return dir, opts, err
	}
	snap, err := v.Snapshot(ctx)
	v.Close()
	if err != nil {
		return dir, opts, err
	}
	rcpt, err := age.ParseX25519Recipient(res.Recipient)
	if err != nil {
		return dir, opts, err
	}
	var stream bytes.Buffer
	if err := fastImport(&stream, rcpt, snap.Commit()); err != nil {
		return dir, opts, err
	}
	cmd := exec.Command("git", "-C", filepath.Join(dir, "vault.git"), "fast-import", "--quiet", "--force")
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		return dir, opts, fmt.Errorf("git fast-import: %v\n%s", err, out)
	}
	return dir, opts, nil
}

// fastImport writes the history: one commit importing every file on top of the
// vault's first commit, then single-file rewrites until benchCommits.
func fastImport(w *bytes.Buffer, rcpt age.Recipient, parent string) error {
	const blobs = 256
	bw := bufio.NewWriter(w)
	for i := 1; i <= blobs; i++ {
		var ct bytes.Buffer
		enc, err := age.Encrypt(&ct, rcpt)
		if err != nil {
			return err
		}
		fmt.Fprintf(enc, "memory %d: the user prefers short answers.\n", i)
		if err := enc.Close(); err != nil {
			return err
		}
		fmt.Fprintf(bw, "blob\nmark :%d\ndata %d\n", i, ct.Len())
		bw.Write(ct.Bytes())
		bw.WriteString("\n")
	}
	path := func(i int) string { return fmt.Sprintf("memories/d%03d/f%05d.md", i/100, i) }
	commit := func(n int, command, p, toolUse string) {
		t := epoch.Add(time.Duration(n) * time.Second).Unix()
		msg := fmt.Sprintf("%s /%s\n\nMemory-Command: %s\nMemory-Path: /%s\nTool-Use-Id: %s\nAgent: claude\n", command, p, command, p, toolUse)
		fmt.Fprintf(bw, "commit refs/heads/main\nauthor claude <agent@memvault> %d +0000\ncommitter memvault <memvault@localhost> %d +0000\ndata %d\n%s", t, t, len(msg), msg)
	}
	commit(1, "import", "memories", "toolu_import")
	fmt.Fprintf(bw, "from %s\n", parent)
	for i := range benchFiles {
		fmt.Fprintf(bw, "M 100644 :%d %s\n", i%blobs+1, path(i))
	}
	bw.WriteString("\n")
	for n := 2; n < benchCommits; n++ { // the vault's own first commit makes one more
		i := (n * 7919) % benchFiles
		commit(n, "str_replace", path(i), fmt.Sprintf("toolu_%08d", n))
		fmt.Fprintf(bw, "M 100644 :%d %s\n\n", n%blobs+1, path(i))
	}
	bw.WriteString("done\n")
	return bw.Flush()
}

// withoutStatus is the vault without the status bar's remote state: a running
// interface reads it only statusDelay after the head moved, off the paths these
// benchmarks time, where the driver, which runs every command at once, would
// run it first.
type withoutStatus struct{ Vault }

// benchDriver is the test driver without golden-file support.
func benchDriver(b *testing.B, v *vault.Vault, w, h int) *driver {
	now := epoch.Add(benchCommits * time.Second)
	m := New(context.Background(), withoutStatus{v}, Options{Now: func() time.Time { return now }, PollInterval: -1})
	d := &driver{tb: b, m: m, v: v}
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(m.Init())
	return d
}

// BenchmarkFirstFrame is the time from opening the vault to the first complete
// frame (tree, first page of history, content) on a vault of 10,000 files and
// 100,000 commits. Target: ≤ 300 ms.
func BenchmarkFirstFrame(b *testing.B) {
	dir, opts := bigVault(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		v, err := vault.Open(ctx, dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		d := benchDriver(b, v, 120, 40)
		frame := ansi.Strip(d.m.View().Content)
		b.StopTimer()
		if len(d.m.tree.rows) != 1+benchFiles/100 || len(d.m.hist.recs) == 0 || !strings.Contains(frame, "d000/") {
			b.Fatalf("first frame is not complete:\n%s", frame)
		}
		v.Close()
		b.StartTimer()
	}
}

// BenchmarkScrollHistory is keystroke-to-frame while scrolling the history of
// the large vault with j: frame is Update and View for the key, what the user
// sees at once; settled adds the commands it starts (the next page of history,
// the selected commit's content) and the frame after them.
func BenchmarkScrollHistory(b *testing.B) {
	dir, opts := bigVault(b)
	v, err := vault.Open(context.Background(), dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	for _, settled := range []bool{false, true} {
		name := "frame"
		if settled {
			name = "settled"
		}
		b.Run(name, func(b *testing.B) {
			d := benchDriver(b, v, 120, 40)
			d.keys("tab")
			down := keyMsg("j")
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				_, cmd := d.m.Update(down)
				if settled {
					d.run(cmd)
				}
				_ = d.m.View()
				lat = append(lat, time.Since(start))
				if !settled {
					b.StopTimer()
					d.run(cmd)
					b.StartTimer()
				}
			}
			reportLatency(b, lat)
		})
	}
}

// reportLatency adds the median and 90th percentile of per-key times.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkFileHistory is the time from pressing f on a file to its history's
// first page, on the large vault: a path walk over 100,000 commits. The first
// whole walk completes the vault's history index for the imported commits, as
// a clone's would; it is logged and left out.
func BenchmarkFileHistory(b *testing.B) {
	dir, opts := bigVault(b)
	v, err := vault.Open(context.Background(), dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	const file = "/memories/d042/f04242.md"
	start := time.Now()
	if _, err := v.Log(context.Background(), vault.LogOptions{Path: file}); err != nil {
		b.Fatal(err)
	}
	b.Logf("first path walk (completing the history index): %v", time.Since(start).Round(time.Millisecond))
	for b.Loop() {
		b.StopTimer()
		d := benchDriver(b, v, 120, 40)
		d.selectTree(path.Dir(file))
		d.keys("l")
		d.selectTree(file)
		b.StartTimer()
		d.keys("f")
		b.StopTimer()
		if d.m.hist.scope != file || len(d.m.hist.recs) == 0 {
			b.Fatalf("after f the history shows %d records of %q", len(d.m.hist.recs), d.m.hist.scope)
		}
		b.StartTimer()
	}
}

// selectTree moves the tree's cursor to the row of p, with j and k.
func (d *driver) selectTree(p string) {
	d.tb.Helper()
	for i, n := range d.m.tree.rows {
		if n.path == p {
			for d.m.tree.cursor < i {
				d.keys("j")
			}
			for d.m.tree.cursor > i {
				d.keys("k")
			}
			return
		}
	}
	d.tb.Fatalf("no tree row for %s", p)
}

// BenchmarkJumpToFirst is the time from opening the large vault to its first
// commit selected with its diff shown, after one G in the history: the first
// frame and the jump. Target: ≤ 1 s. whole-walk is G as it was, reading every
// record of the history to find its end (and checking each against its tree);
// shape-walk is G now, walking only the parents (see vault.LogOldest), on a
// vault whose history index is missing (a clone or a fast-import, until a
// long-lived process indexed it) and on one whose index is complete (every
// commit memvault made itself).
func BenchmarkJumpToFirst(b *testing.B) {
	dir, opts := bigVault(b)
	ctx := context.Background()
	index := filepath.Join(dir, "memvault", "history-index") // gitlog's file
	open := func() *vault.Vault {
		v, err := vault.Open(ctx, dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	v := open()
	all, err := v.Log(ctx, vault.LogOptions{}) // earlier runs may have added commits
	v.Close()
	if err != nil {
		b.Fatal(err)
	}
	total := len(all)
	for _, tc := range []struct {
		name    string
		indexed bool
		wrap    func(*vault.Vault) Vault
	}{
		{"unindexed/whole-walk", false, func(v *vault.Vault) Vault { return wholeWalk{withoutStatus{v}} }},
		{"unindexed/shape-walk", false, func(v *vault.Vault) Vault { return withoutStatus{v} }},
		{"indexed/shape-walk", true, func(v *vault.Vault) Vault { return withoutStatus{v} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if !tc.indexed {
				if err := os.Remove(index); err != nil && !os.IsNotExist(err) {
					b.Fatal(err)
				}
			} else {
				v := open()
				start := time.Now()
				_, err := v.Log(ctx, vault.LogOptions{Path: "/memories/d042/f04242.md"}) // a path walk completes the index
				v.Close()
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("completing the history index: %v", time.Since(start).Round(time.Millisecond))
			}
			var jump time.Duration // G alone, without the open and the first frame
			for b.Loop() {
				v := open()
				now := epoch.Add(benchCommits * time.Second)
				m := New(ctx, tc.wrap(v), Options{Now: func() time.Time { return now }, PollInterval: -1})
				d := &driver{tb: b, m: m, v: v}
				d.send(tea.WindowSizeMsg{Width: 160, Height: 45})
				d.run(m.Init())
				d.keys("tab")
				start := time.Now()
				d.keys("G")
				jump += time.Since(start)
				b.StopTimer()
				want := fmt.Sprintf("commit %d/%d", total, total)
				if r := d.m.hist.selected(); r == nil || len(r.Parents) != 0 || !strings.Contains(d.m.statusBar(), want) {
					b.Fatalf("after G the history selects %+v; status %q, want %q", r, d.m.statusBar(), want)
				}
				v.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(jump.Milliseconds())/float64(b.N), "G-ms")
		})
	}
}

// wholeWalk answers LogOldest as G did before LogOldest: from the whole
// history, every record read and checked.
type wholeWalk struct{ Vault }

func (w wholeWalk) LogOldest(ctx context.Context, n int) ([]vault.Record, int, error) {
	all, err := w.Log(ctx, vault.LogOptions{})
	if err != nil {
		return nil, 0, err
	}
	return all[max(len(all)-n, 0):], len(all), nil
}

// BenchmarkJumpToCommit is : with a hash typed, on the large vault: shown is
// from enter to the commit selected or shown with its diff (target: ≤ 300 ms);
// placed adds, for a commit beyond the loaded pages, the walk of the history's
// shape that places it in the history (vault.LogAround), which runs beside the
// interface: on a vault whose history index is missing, then complete. near
// is a commit six rows down, deep one 50,000 commits down.
func BenchmarkJumpToCommit(b *testing.B) {
	dir, opts := bigVault(b)
	ctx := context.Background()
	if err := os.Remove(filepath.Join(dir, "memvault", "history-index")); err != nil && !os.IsNotExist(err) { // gitlog's file
		b.Fatal(err)
	}
	v, err := vault.Open(ctx, dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	near, err := v.Log(ctx, vault.LogOptions{Skip: 6, Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	deep, err := v.Log(ctx, vault.LogOptions{Skip: 50000, Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		commit string
		placed bool
	}{{"near", near[0].Commit, false}, {"deep/shown", deep[0].Commit, false}, {"deep/placed/unindexed", deep[0].Commit, true}, {"deep/placed/indexed", deep[0].Commit, true}} {
		b.Run(tc.name, func(b *testing.B) {
			if strings.HasSuffix(tc.name, "/indexed") {
				// A path walk completes the index, as a long-lived process does.
				if _, err := v.Log(ctx, vault.LogOptions{Path: "/memories/d042/f04242.md"}); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				b.StopTimer()
				d := benchDriver(b, v, 120, 40)
				d.keys("tab", ":")
				d.typeText(tc.commit[:10])
				b.StartTimer()
				start := time.Now()
				_, cmd := d.m.Update(keyMsg("enter"))
				_, next := d.m.Update(cmd()) // the lookup and the commit's diff
				_ = d.m.View()
				if tc.placed {
					d.run(next)
				}
				lat = append(lat, time.Since(start))
				b.StopTimer()
				if d.m.content.want.rev != tc.commit || tc.placed && d.m.hist.selected().Commit != tc.commit {
					b.Fatalf("after : the content shows %+v", d.m.content.want)
				}
				b.StartTimer()
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkHeldKeys is 100 j keys held down in the history on a vault whose
// every commit changes a 3,000-line file (188 KB), as a terminal's key repeat
// sends them, one every 20 ms: the lag from the last key to the screen
// showing the 100th commit's diff. Each key's selection asks for a decrypted
// diff of two versions of the file; costly makes each such diff take 60 ms of
// processor, as on a loaded machine, so that reads started for every key
// would keep the processors from the keys. Target: the 100 keys drained
// within 1 s of the first.
func BenchmarkHeldKeys(b *testing.B) {
	for _, costly := range []bool{false, true} {
		b.Run(map[bool]string{false: "diff", true: "costly-diff"}[costly], func(b *testing.B) { benchHeldKeys(b, costly) })
	}
	b.Run("large-vault", benchHeldKeysLarge)
}

// benchHeldKeysLarge is 100 j keys sent at once in the history of the large
// vault (10,000 files, 100,000 commits): from the first to the screen showing
// the 101st commit, selected, with its diff. Target: ≤ 1 s.
func benchHeldKeysLarge(b *testing.B) {
	dir, opts := bigVault(b)
	v, err := vault.Open(context.Background(), dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	first, err := v.Log(context.Background(), vault.LogOptions{Limit: 101})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		a := newAsyncDriver(b, withoutStatus{v}, v, 120, 40)
		a.press("tab")
		a.settle()
		b.StartTimer()
		start := time.Now()
		for range 100 {
			a.msgs <- keyMsg("j")
		}
		a.until(func() bool {
			return a.m.content.want.rev == first[100].Commit && a.m.content.kind == bodyDiff
		}, "the 101st commit's diff")
		_ = a.m.View()
		lat = append(lat, time.Since(start))
		b.StopTimer()
		a.settle()
		b.StartTimer()
	}
	reportLatency(b, lat)
}

// costlyShow spends 60 ms of processor on each commit it shows.
type costlyShow struct{ *vault.Vault }

func (c costlyShow) Show(ctx context.Context, rev string) (*vault.Change, error) {
	for start := time.Now(); time.Since(start) < 60*time.Millisecond; {
	}
	return c.Vault.Show(ctx, rev)
}

func benchHeldKeys(b *testing.B, costly bool) {
	w, opts := newVault(b)
	lines := make([]string, 3000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: what the agent noted about the project, kept at some length", i)
	}
	for c := range 110 {
		for k := range 5 {
			i := (c*97 + k*31) % len(lines)
			lines[i] = fmt.Sprintf("line %d: changed by commit %d", i, c)
		}
		write(b, w, vault.Meta{Command: "str_replace", Agent: "claude"}, "/memories/big.md", strings.Join(lines, "\n")+"\n")
	}
	all, err := w.Log(context.Background(), vault.LogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		b.StopTimer()
		// A process of its own, as the interface is: nothing decrypted yet.
		v, err := vault.Open(context.Background(), w.Dir(), opts)
		if err != nil {
			b.Fatal(err)
		}
		var ui Vault = v
		if costly {
			ui = costlyShow{v}
		}
		a := newAsyncDriver(b, ui, v, 120, 40)
		a.press("tab")
		a.settle()
		go func() {
			for range 100 {
				a.msgs <- keyMsg("j")
				time.Sleep(20 * time.Millisecond)
			}
		}()
		a.until(func() bool { r := a.m.hist.selected(); return r != nil && r.Commit == all[100].Commit }, "the 100th key")
		b.StartTimer()
		start := time.Now()
		a.until(func() bool {
			return a.m.content.want.rev == all[100].Commit && a.m.content.kind == bodyDiff
		}, "the 100th commit's diff")
		_ = a.m.View()
		lat = append(lat, time.Since(start))
		b.StopTimer()
		a.settle()
		v.Close()
		b.StartTimer()
	}
	reportLatency(b, lat)
}

// BenchmarkFilterNoMatch is a history filter no commit passes, on the large
// vault: from the filter typed to the whole history read (every record is
// read and checked to know that none passes).
func BenchmarkFilterNoMatch(b *testing.B) {
	dir, opts := bigVault(b)
	v, err := vault.Open(context.Background(), dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	for b.Loop() {
		b.StopTimer()
		d := benchDriver(b, v, 120, 40)
		d.keys("tab")
		b.StartTimer()
		d.run(d.m.applyFilter("agent:importer-bot")) // as typed at once
		b.StopTimer()
		if !d.m.hist.done || len(d.m.hist.view) != 0 {
			b.Fatalf("the filter read %d records (done %v) and passed %d", len(d.m.hist.recs), d.m.hist.done, len(d.m.hist.view))
		}
		b.StartTimer()
	}
}

// BenchmarkEditLargeFile is the editor on a file of 188 KB (about 2,900
// lines): open is from e to the editor drawn, key a character typed and the
// frame drawn after it. It once took 1.5 s to open and a second a key.
func BenchmarkEditLargeFile(b *testing.B) {
	v, _ := newVault(b)
	var sb strings.Builder
	for i := 0; sb.Len() < 188<<10; i++ {
		fmt.Fprintf(&sb, "line %d: the agent wrote this much about the user's project today\n", i)
	}
	write(b, v, vault.Meta{Command: "create"}, "/memories/big.md", sb.String())
	for _, what := range []string{"open", "key"} {
		b.Run(what, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			d := newDriverOpts(b, v, v, 120, 40, Options{})
			d.keys("j")
			for b.Loop() {
				b.StopTimer()
				if what == "open" && d.m.editor != nil {
					d.keys("esc") // nothing changed: it leaves
				} else if what == "key" && d.m.editor == nil {
					d.keys("e")
				}
				b.StartTimer()
				start := time.Now()
				if what == "open" {
					d.keys("e")
				} else {
					d.typeText("x")
				}
				_ = d.m.View()
				lat = append(lat, time.Since(start))
				if d.m.editor == nil {
					b.Fatalf("no editor after %d: %q mode %v", len(lat), d.m.status, d.m.mode)
				}
			}
			reportLatency(b, lat)
		})
	}
}
