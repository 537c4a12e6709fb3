package vault_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// For the fleet of the issue: go test ./vault -run TestSyncFleet -fleet.agents 16 -v
var (
	fleetAgents = flag.Int("fleet.agents", 0, "TestSyncFleet: how many clones (0: 4)")
	fleetWrites = flag.Int("fleet.writes", 0, "TestSyncFleet: writes per clone (0: 6, or 4 with -short)")
)

// fleetShared is the file every agent of a fleet edits, one line each. A line
// that never changes stands between two agents' lines, so their edits do not
// touch and merge cleanly.
const fleetShared = "/memories/shared.md"

// fleetLine is agent i's line of fleetShared after its w-th write.
func fleetLine(i, w int) string { return fmt.Sprintf("agent %02d wrote %d\n", i, w) }

// fleetNote is the memory agent i writes at its w-th write.
func fleetNote(i, w int) (path, content string) {
	return fmt.Sprintf("/memories/agent-%02d/note-%03d.md", i, w), fmt.Sprintf("agent %02d, note %d\n", i, w)
}

// fleet is n clones of one vault at a remote, each an agent.
type fleet struct {
	url    string
	agents []*vault.Vault
}

// newFleet makes a vault holding fleetShared with a line for each of n agents,
// pushes it to url and clones it n times; the vault is in the sealed format
// when sealed.
func newFleet(t testing.TB, url string, n int, sealed bool) *fleet {
	t.Helper()
	dir := t.TempDir()
	newAt := vaulttest.NewPlainAt
	if sealed {
		newAt = vaulttest.NewSealedAt
	}
	seed, opts := newAt(t, dir)
	var shared strings.Builder
	for i := range n {
		shared.WriteString(fleetLine(i, 0) + "--\n")
	}
	err := seed.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, fleetShared, []byte(shared.String()))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := seed.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Sync(ctx, vault.SyncOptions{Host: "seed"}); err != nil {
		t.Fatalf("seed Sync: %v", err)
	}
	f := &fleet{url: url}
	for i := range n {
		v, _, err := vault.Clone(ctx, url, filepath.Join(dir, fmt.Sprintf("agent-%02d.git", i)), opts, vault.CloneOptions{})
		if err != nil {
			t.Fatalf("Clone %d: %v", i, err)
		}
		t.Cleanup(func() { v.Close() })
		f.agents = append(f.agents, v)
	}
	return f
}

// write is agent i's w-th write: a note of its own, then its line of the
// shared file.
func (f *fleet) write(i, w int) error {
	v := f.agents[i]
	p, content := fleetNote(i, w)
	err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, p, []byte(content))
	})
	if err != nil {
		return err
	}
	return v.Update(ctx, vault.Meta{Command: "str_replace"}, func(tx *vault.Tx) error {
		old, err := tx.ReadFile(ctx, fleetShared)
		if err != nil {
			return err
		}
		s := string(old)
		if !strings.Contains(s, fleetLine(i, w-1)) {
			return fmt.Errorf("agent %d: %s lacks its own line %q:\n%s", i, fleetShared, fleetLine(i, w-1), s)
		}
		return tx.WriteFile(ctx, fleetShared, []byte(strings.Replace(s, fleetLine(i, w-1), fleetLine(i, w), 1)))
	})
}

// fleetRun is what a fleet's run did.
type fleetRun struct {
	syncs    int
	failed   []error       // the syncs that failed
	converge time.Duration // from the start until the last agent's last sync
	slowest  time.Duration // the longest single sync
}

// run starts every agent at once: each makes writes writes, syncing after
// every every-th and after its last, each sync bounded by timeout.
func (f *fleet) run(writes, every int, timeout time.Duration) fleetRun {
	var (
		mu  sync.Mutex
		run fleetRun
		wg  sync.WaitGroup
	)
	start := make(chan struct{})
	sync1 := func(i int) {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		t0 := time.Now()
		_, err := f.agents[i].Sync(sctx, vault.SyncOptions{Host: fmt.Sprintf("agent-%02d", i)})
		d := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		run.syncs++
		run.slowest = max(run.slowest, d)
		if err != nil {
			run.failed = append(run.failed, fmt.Errorf("agent %d: sync after %v: %w", i, d.Round(time.Millisecond), err))
		}
	}
	for i := range f.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for w := 1; w <= writes; w++ {
				if err := f.write(i, w); err != nil {
					mu.Lock()
					run.failed = append(run.failed, fmt.Errorf("agent %d: write %d: %w", i, w, err))
					mu.Unlock()
					return
				}
				if w%every == 0 || w == writes {
					sync1(i)
				}
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	run.converge = time.Since(t0)
	return run
}

// check syncs each agent once more, one after the other, and then wants every
// head equal and every note and line every agent wrote present.
func (f *fleet) check(t *testing.T, writes int) {
	t.Helper()
	for i, v := range f.agents {
		res, err := v.Sync(ctx, vault.SyncOptions{Host: fmt.Sprintf("agent-%02d", i)})
		if err != nil {
			t.Fatalf("agent %d: the sync after the run: %v", i, err)
		}
		// Every agent pushed its last write in the run: the remote already
		// holds everything, so nothing is left to merge.
		if res.Action != "fast-forward" && res.Action != "up to date" {
			t.Errorf("agent %d: the sync after the run = %+v, want a fast-forward or up to date", i, res)
		}
	}
	want := head(t, f.agents[0])
	for i, v := range f.agents {
		if h := head(t, v); h != want {
			t.Errorf("agent %d: head %s, want %s (agent 0's)", i, h, want)
		}
	}
	got := files(t, f.agents[len(f.agents)-1])
	var shared strings.Builder
	for i := range f.agents {
		shared.WriteString(fleetLine(i, writes) + "--\n")
		for w := 1; w <= writes; w++ {
			p, content := fleetNote(i, w)
			if got[p] != content {
				t.Errorf("%s = %q, want %q", p, got[p], content)
			}
		}
	}
	if got[fleetShared] != shared.String() {
		t.Errorf("%s =\n%s\nwant\n%s", fleetShared, got[fleetShared], shared.String())
	}
	if n, want := len(got), len(f.agents)*writes+1; n != want {
		t.Errorf("the vault holds %d files, want %d", n, want)
	}
}

// TestSyncFleet: a fleet of agents, each with its own clone of one
// vault, writing notes and editing its own line of a shared file, all syncing
// through one remote (git daemon, git http-backend) at once, every few writes.
// Every sync succeeds within its timeout, and afterwards every clone has the
// same head and every note and line every agent wrote.
func TestSyncFleet(t *testing.T) {
	agents, writes, every := 4, 6, 2
	if testing.Short() {
		writes = 4
	}
	if *fleetAgents > 0 {
		agents = *fleetAgents
	}
	if *fleetWrites > 0 {
		writes = *fleetWrites
	}
	const timeout = 2 * time.Minute
	for _, srv := range []struct {
		name   string
		url    func(testing.TB) string
		sealed bool
	}{
		{"git daemon", daemonRemote, false},
		{"http-backend", quietHTTPRemote, false},
		{"git daemon sealed", daemonRemote, true},
	} {
		t.Run(srv.name, func(t *testing.T) {
			f := newFleet(t, srv.url(t), agents, srv.sealed)
			run := f.run(writes, every, timeout)
			for _, err := range run.failed {
				t.Error(err)
			}
			t.Logf("%d agents, %d writes each, a sync every %d: %d syncs, %d failed; converged in %v, the slowest sync %v",
				agents, writes, every, run.syncs, len(run.failed), run.converge.Round(time.Millisecond), run.slowest.Round(time.Millisecond))
			f.check(t, writes)
		})
	}
}

// quietHTTPRemote is httpRemote without git http-backend's "cannot lock ref"
// on stderr for each push that lost the race.
func quietHTTPRemote(t testing.TB) string {
	backend := httpBackend(t)
	backend.Stderr = io.Discard
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	return srv.URL + "/vault.git"
}
