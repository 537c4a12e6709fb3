package autosync_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/autosync"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

var ctx = context.Background()

// watcher is a vault with autosync.Run running on it, and its reports.
type watcher struct {
	v      *vault.Vault
	stop   context.CancelFunc
	done   chan error
	halted bool

	mu      sync.Mutex
	reports []autosync.Report
}

// startWatch runs autosync.Run on v until the test ends (or halt), syncing every
// every and with short waits after a write or a failure, so a test sees
// changes within seconds.
func startWatch(t *testing.T, v *vault.Vault, host string, every time.Duration) *watcher {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	w := &watcher{v: v, stop: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- autosync.Run(wctx, v, autosync.Options{
			Sync:     vault.SyncOptions{Host: host},
			Every:    every,
			Delay:    50 * time.Millisecond,
			Timeout:  20 * time.Second,
			RetryCap: 400 * time.Millisecond,
			Report: func(r autosync.Report) {
				w.mu.Lock()
				w.reports = append(w.reports, r)
				w.mu.Unlock()
			},
		})
	}()
	t.Cleanup(func() { w.halt(t) })
	return w
}

// halt stops the loop and wants it to return nil soon.
func (w *watcher) halt(t *testing.T) {
	t.Helper()
	w.stop()
	if w.halted {
		return
	}
	w.halted = true
	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("Run = %v, want nil once its context is done", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("Run did not return within 30s of its context ending")
	}
}

// since returns the reports from the nth on.
func (w *watcher) since(n int) []autosync.Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]autosync.Report(nil), w.reports[min(n, len(w.reports)):]...)
}

func (w *watcher) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.reports)
}

// waitFor waits, up to limit, until cond holds, looking each time the vault's
// branch moves and every 20ms; it returns how long that took.
func waitFor(t *testing.T, v *vault.Vault, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	moved, err := v.Watch(wctx)
	if err != nil && !errors.Is(err, vault.ErrWatchUnsupported) {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	t0 := time.Now()
	for !cond() {
		select {
		case <-moved:
		case <-tick.C:
		case <-wctx.Done():
			t.Fatalf("%s: not within %v", what, limit)
		}
	}
	return time.Since(t0)
}

// hasFile says whether v holds p with content.
func hasFile(t *testing.T, v *vault.Vault, p, content string) bool {
	got, err := read(t, v, p)
	return err == nil && got == content
}

// TestAutosync: two clones of a vault at a git daemon on loopback,
// each with autosync.Run running as `memvault sync --watch` runs it. A write on
// one shows up on the other within seconds, both ways. When the daemon goes
// away, both loops report failures and back off; writes made meanwhile on both
// sides are in both clones, merged, soon after it comes back at the same URL.
func TestAutosync(t *testing.T) {
	d := gittest.NewDaemon(t)
	dir := t.TempDir()
	a, opts := vaulttest.NewAt(t, filepath.Join(dir, "seed"))
	write(t, a, "/memories/start.md", "start\n")
	if err := a.AddRemote("origin", d.URL); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	b, _, err := vault.Clone(ctx, d.URL, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	const (
		every = 300 * time.Millisecond
		never = time.Hour
		limit = 15 * time.Second // the bound; it takes well under a second
	)
	// A write on one shows up on the other: first with a syncing only after
	// its writes and b only on its interval, then with both doing both.
	wa, wb := startWatch(t, a, "a", never), startWatch(t, b, "b", every)
	for i, pair := range []struct {
		name     string
		from, to *vault.Vault
	}{{"a to b", a, b}, {"b to a", b, a}} {
		if i == 1 {
			wa.halt(t)
			wa = startWatch(t, a, "a", every)
		}
		// After the first syncs, so the write is not in them.
		for _, w := range []*watcher{wa, wb} {
			waitFor(t, w.v, limit, "the first sync", func() bool { return w.count() > 0 })
		}
		p, content := fmt.Sprintf("/memories/w%d.md", i), fmt.Sprintf("written for %s\n", pair.name)
		write(t, pair.from, p, content)
		took := waitFor(t, pair.to, limit, pair.name, func() bool { return hasFile(t, pair.to, p, content) })
		t.Logf("%s: the write showed up in %v", pair.name, took.Round(time.Millisecond))
	}

	// The remote goes away: both loops fail, and keep failing with growing
	// waits, while both sides write.
	d.Stop()
	na, nb := wa.count(), wb.count()
	write(t, a, "/memories/down-a.md", "a, remote down\n")
	write(t, b, "/memories/down-b.md", "b, remote down\n")
	for _, w := range []struct {
		name string
		w    *watcher
		n    int
	}{{"a", wa, na}, {"b", wb, nb}} {
		waitFor(t, w.w.v, limit, w.name+" reports two failed syncs in a row", func() bool {
			for _, r := range w.w.since(w.n) {
				if r.Failures >= 2 {
					return true
				}
			}
			return false
		})
		for _, r := range w.w.since(w.n) {
			switch {
			case r.Err == nil:
			case !errors.Is(r.Err, vault.ErrUnreachable):
				t.Errorf("%s: a sync with the remote down failed with %v, want an error wrapping vault.ErrUnreachable", w.name, r.Err)
			case r.Retry <= 0 || r.Retry > 400*time.Millisecond:
				t.Errorf("%s: failure %d: retry in %v, want within (0, RetryCap 400ms]", w.name, r.Failures, r.Retry)
			}
		}
	}

	// It comes back: both are caught up, with each other's writes.
	d.Start()
	took := waitFor(t, a, limit, "a and b caught up after the remote came back", func() bool {
		return hasFile(t, a, "/memories/down-b.md", "b, remote down\n") && hasFile(t, b, "/memories/down-a.md", "a, remote down\n")
	})
	t.Logf("caught up %v after the remote came back", took.Round(time.Millisecond))
	waitFor(t, a, limit, "both heads equal", func() bool { return head(t, a) == head(t, b) })
	want := map[string]string{
		"/memories/start.md":  "start\n",
		"/memories/w0.md":     "written for a to b\n",
		"/memories/w1.md":     "written for b to a\n",
		"/memories/down-a.md": "a, remote down\n",
		"/memories/down-b.md": "b, remote down\n",
	}
	for name, v := range map[string]*vault.Vault{"a": a, "b": b} {
		got := files(t, v)
		if len(got) != len(want) {
			t.Errorf("%s holds %d files, want %d: %v", name, len(got), len(want), got)
		}
		for p, c := range want {
			if got[p] != c {
				t.Errorf("%s: %s = %q, want %q", name, p, got[p], c)
			}
		}
	}
}

// failedTwice waits until w reports two failed syncs in a row from its nth
// report on, and returns the failures.
func failedTwice(t *testing.T, w *watcher, n int, what string) []autosync.Report {
	t.Helper()
	var failed []autosync.Report
	waitFor(t, w.v, 15*time.Second, what, func() bool {
		failed = failed[:0]
		for _, r := range w.since(n) {
			if r.Err != nil {
				failed = append(failed, r)
			}
		}
		return len(failed) >= 2 && failed[len(failed)-1].Failures >= 2
	})
	return failed
}

// TestAutosyncRefusals: what a watching sync must not take on its
// own is reported and tried again later, and the loop goes on. A hostile
// commit on the remote (pushed with git plumbing) is refused on every try,
// moving nothing, until the remote is back at a good commit; a change of the
// recipients made elsewhere waits for a person even when the options say to
// accept it.
func TestAutosyncRefusals(t *testing.T) {
	d := gittest.NewDaemon(t)
	a, b, opts := hostilePair(t, d.URL)
	w := startWatch(t, b, "b", 300*time.Millisecond)
	waitFor(t, b, 15*time.Second, "the first sync", func() bool { return w.count() > 0 })

	h := gittest.NewHostile(t, d.URL)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	good := h.Head()
	bad := h.Commit(h.Set(good+"^{tree}", "memories/evil.md", gittest.TreeEntry{Mode: "120000", Hash: h.Blob([]byte("/etc/passwd"))}), "hostile\n", good)
	before, n := head(t, b), w.count()
	h.Push(bad)
	for _, r := range failedTwice(t, w, n, "b refuses the hostile commit twice") {
		if !errors.Is(r.Err, vault.ErrRefused) {
			t.Errorf("a sync of the hostile remote failed with %v, want an error wrapping vault.ErrRefused", r.Err)
		}
	}
	if got := head(t, b); got != before {
		t.Errorf("b's head moved from %s to %s past a hostile commit", before, got)
	}
	// The remote is put back; the loop takes the next good write.
	h.Git("update-ref", "refs/heads/main", good)
	h.Git("push", "-q", "--force", d.URL, "refs/heads/main:refs/heads/main")
	write(t, a, "/memories/after.md", "after the refusal\n")
	mustSync(t, a)
	waitFor(t, b, 15*time.Second, "b takes a's write after the remote was put back", func() bool {
		return hasFile(t, b, "/memories/after.md", "after the refusal\n")
	})

	// A change of recipients on the remote.
	w.halt(t)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var reports []autosync.Report
	done := make(chan error, 1)
	go func() {
		done <- autosync.Run(wctx, b, autosync.Options{
			Sync:  vault.SyncOptions{Host: "b", AcceptRecipients: true},
			Every: 300 * time.Millisecond, Delay: 50 * time.Millisecond, RetryCap: 400 * time.Millisecond,
			Report: func(r autosync.Report) { mu.Lock(); reports = append(reports, r); mu.Unlock() },
		})
	}()
	other, err := keys.CreateIdentity(filepath.Join(t.TempDir(), "other"), keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := other.Recipients[0].Key
	if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{key}}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	before = head(t, b)
	waitFor(t, b, 15*time.Second, "b refuses the recipients change twice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		k := 0
		for _, r := range reports {
			if errors.Is(r.Err, vault.ErrRecipientsChanged) {
				k++
				if !r.Result.RecipientsChanged || !slices.ContainsFunc(r.Result.RecipientsAdded, func(rc keys.Recipient) bool { return rc.Key == key }) {
					t.Errorf("report %+v does not show the remote's added recipient %s", r.Result, key)
				}
			}
		}
		return k >= 2
	})
	if got := head(t, b); got != before {
		t.Errorf("b's head moved from %s to %s: a watching sync took a change of recipients", before, got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("Run did not return within 30s of its context ending")
	}
}
