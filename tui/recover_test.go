package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/vault"
)

// flaky is a vault whose reads fail while told to, as a long-lived reader's
// did when another process merged the packs it had open.
type flaky struct {
	*vault.Vault
	mu   sync.Mutex
	fail map[string]int // method name → how many more calls fail
}

var errGone = errors.New("open objects/pack/pack-4bc6.pack: no such file or directory")

func (f *flaky) failing(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[method] > 0 {
		f.fail[method]--
		return true
	}
	return false
}

func (f *flaky) failNext(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]int{}
	}
	f.fail[method] = n
}

func (f *flaky) Snapshot(ctx context.Context) (*vault.Snapshot, error) {
	if f.failing("Snapshot") {
		return nil, errGone
	}
	return f.Vault.Snapshot(ctx)
}

func (f *flaky) Show(ctx context.Context, rev string) (*vault.Change, error) {
	if f.failing("Show") {
		return nil, errGone
	}
	return f.Vault.Show(ctx, rev)
}

func (f *flaky) Log(ctx context.Context, opts vault.LogOptions) ([]vault.Record, error) {
	if f.failing("Log") {
		return nil, errGone
	}
	return f.Vault.Log(ctx, opts)
}

func (f *flaky) SnapshotAt(ctx context.Context, rev string) (*vault.Snapshot, error) {
	if f.failing("SnapshotAt") {
		return nil, errGone
	}
	return f.Vault.SnapshotAt(ctx, rev)
}

// A read that failed once left its pane dead: "open …pack: no such file" in
// the content until a restart, a history that never loaded another page, an
// empty screen when the head could not be read. Each now says what failed and
// that any key reads it again, and the next key does.
func TestFailedReadIsReadAgain(t *testing.T) {
	t.Run("content", func(t *testing.T) {
		v, _ := newVault(t)
		seed(t, v)
		f := &flaky{Vault: v}
		d := newDriverFor(t, f, v, 80, 24)
		d.keys("tab")
		f.failNext("Show", 1)
		d.keys("j")
		d.golden("read_failed")
		d.keys("x") // any key
		if d.m.content.kind != bodyDiff || !strings.Contains(d.frame(), "+temporary") {
			t.Errorf("after a key the failed commit is not read again:\n%s", d.frame())
		}
	})
	t.Run("as-of", func(t *testing.T) {
		v, _ := newVault(t)
		seed(t, v)
		f := &flaky{Vault: v}
		d := newDriverFor(t, f, v, 80, 24)
		d.keys("G", "l", "j", "tab", "j", "j", "j", "j", "j")
		f.failNext("SnapshotAt", 1)
		d.keys("v")
		if d.m.content.kind != bodyError {
			t.Fatalf("the failing read shows no error:\n%s", d.frame())
		}
		d.keys("x")
		if d.m.content.kind != bodyText || !strings.Contains(d.frame(), "British English") {
			t.Errorf("after a key the file as it was is not read again:\n%s", d.frame())
		}
	})
	t.Run("history", func(t *testing.T) {
		v, _ := newVault(t)
		for i := range 12 {
			write(t, v, vault.Meta{Command: "create"}, fmt.Sprintf("/memories/f%02d.md", i), "x\n")
		}
		f := &flaky{Vault: v}
		f.failNext("Log", 1)
		d := newDriverOpts(t, f, v, 80, 24, Options{PageSize: 4})
		if d.m.hist.err == nil || !strings.Contains(d.frame(), "any key tries again") {
			t.Fatalf("a failed page of history says nothing:\n%s", d.frame())
		}
		d.keys("tab")
		for range 12 {
			d.keys("j")
		}
		if pos, _ := at(d); pos != "13/13" {
			t.Errorf("after the failed page the history reaches %s, want 13/13", pos)
		}
	})
	t.Run("head", func(t *testing.T) {
		v, _ := newVault(t)
		seed(t, v)
		f := &flaky{Vault: v}
		f.failNext("Snapshot", 1)
		d := newDriverFor(t, f, v, 80, 24)
		if !strings.Contains(d.frame(), "Cannot read the vault") {
			t.Fatalf("a failed first read of the head says nothing:\n%s", d.frame())
		}
		d.keys("x")
		if d.m.snap == nil || len(d.m.tree.rows) < 3 || len(d.m.hist.recs) != 7 {
			t.Errorf("after a key the vault is not read again:\n%s", d.frame())
		}
	})
}

// An open interface reads history after another process merged the packs it
// had open: another handle on the directory writes versions of a file above
// 16 KiB (which go-git reads from its pack only when asked) and packs the
// vault; then, round after round, it writes more and packs again, and the
// interface shows a version of that file it never read, a commit's diff, and
// restores the file. It once failed with "open …/pack-….pack: no such file or
// directory" until restarted.
func TestReadsAfterPackMerge(t *testing.T) {
	ctx := context.Background()
	v, opts := newVault(t)
	other, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const notes = "/memories/notes.md"
	version := func(i int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "# Notes\n\nversion %d\n", i)
		for b.Len() < 20<<10 {
			fmt.Fprintf(&b, "version %d, byte %d: what the agent keeps\n", i, b.Len())
		}
		return b.String()
	}
	const versions = 7
	for i := range versions {
		write(t, other, vault.Meta{Command: "str_replace", Agent: "claude"}, notes, version(i))
	}
	if _, err := other.Pack(ctx); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, v, 100, 30) // it reads the head from that pack
	d.selectTree(notes)
	d.keys("f", "tab")
	if len(d.m.hist.recs) != versions {
		t.Fatalf("the history of notes.md holds %d commits, want %d", len(d.m.hist.recs), versions)
	}
	commits := make([]string, versions) // by version
	for i, r := range d.m.hist.recs {
		commits[versions-1-i] = r.Commit
	}

	for round := 1; round <= 3; round++ {
		write(t, other, vault.Meta{Command: "create", Agent: "importer"}, fmt.Sprintf("/memories/big%d.md", round), version(100+round))
		if _, err := other.Pack(ctx); err != nil {
			t.Fatalf("round %d: Pack: %v", round, err)
		}
		// A version never read here: the commit's diff (it reads that
		// version and the one before), then the file as it was.
		old := 2 * round
		d.selectCommit(commits[old])
		if d.m.content.kind != bodyDiff || !slices.Contains(d.m.content.lines, fmt.Sprintf("+version %d", old)) {
			t.Fatalf("round %d: the diff of version %d:\n%s", round, old, d.frame())
		}
		d.keys("v")
		if d.m.content.kind != bodyText || !strings.Contains(d.frame(), fmt.Sprintf("version %d", old)) {
			t.Fatalf("round %d: notes.md as it was at version %d:\n%s", round, old, d.frame())
		}
		d.keys("v", "r", "y")
		if got := readMemory(t, v, notes); got != version(old) {
			t.Fatalf("round %d: after the restore notes.md is not version %d; the screen:\n%s", round, old, d.frame())
		}
		if d.m.isErr || d.m.content.kind == bodyError {
			t.Fatalf("round %d: an error shows:\n%s", round, d.frame())
		}
	}
}

// selectCommit moves the focus to the history and its cursor to commit c,
// with j and k.
func (d *driver) selectCommit(c string) {
	d.tb.Helper()
	for d.m.focus != paneHistory {
		d.keys("tab")
	}
	for i, j := range d.m.hist.view {
		if d.m.hist.recs[j].Commit != c {
			continue
		}
		for d.m.hist.cursor < i {
			d.keys("j")
		}
		for d.m.hist.cursor > i {
			d.keys("k")
		}
		return
	}
	d.tb.Fatalf("no history row for %s", short(c))
}
