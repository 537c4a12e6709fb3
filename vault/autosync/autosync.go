// Package autosync keeps a vault in sync without a person: an agent writes
// to its own clone and a loop beside it syncs soon after each write and on an
// interval, to bring in what other clones pushed. The loop watches the branch
// (inotify on Linux, see vault.Vault.Watch) rather than being told of writes,
// so it sees every writer of the vault: the MCP server, serve, other
// processes. It holds the vault's lock only as long as vault.Vault.Sync does
// (while the branch moves), so a memory tool call never waits for the network.
package autosync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/memvault/memvault/vault"
)

// Defaults of Options.
const (
	// DefaultEvery is how often the loop looks for others' changes.
	DefaultEvery = 30 * time.Second
	// DefaultDelay is how long the loop waits after a write before it syncs,
	// so that a burst of writes goes in one sync.
	DefaultDelay = time.Second
	// DefaultTimeout bounds each sync.
	DefaultTimeout = 2 * time.Minute
	// DefaultRetryCap is the longest wait between failed syncs.
	DefaultRetryCap = 5 * time.Minute
)

// retryBase is the wait after the first failed sync; each further failure
// doubles it, up to Options.RetryCap.
const retryBase = time.Second

// Options configure Run.
type Options struct {
	// Sync configures each sync. AcceptRecipients and AcceptWriters are
	// ignored: a change of the
	// recipients made on the remote always waits for a person.
	Sync vault.SyncOptions
	// Every is how often to sync when nothing was written, to bring in what
	// others pushed; 0 means DefaultEvery.
	Every time.Duration
	// Delay is how long after a write to sync; writes meanwhile go in the same
	// sync. 0 means DefaultDelay.
	Delay time.Duration
	// Timeout bounds each sync; 0 means DefaultTimeout.
	Timeout time.Duration
	// RetryCap is the longest wait after failed syncs (the wait doubles from a
	// second with each failure, drawn at random from its upper half); 0 means
	// DefaultRetryCap.
	RetryCap time.Duration
	// Report, if set, is called after every sync with its outcome, from the
	// goroutine running Run.
	Report func(Report)
}

// Report is the outcome of one sync of Run.
type Report struct {
	Why    string           // "start", "write" (the vault's branch moved), "interval" or "retry"
	Result vault.SyncResult // what the sync did
	Err    error            // nil when it succeeded
	Took   time.Duration    // how long the sync took
	// Failures counts the syncs that failed in a row, this one included; 0
	// when it succeeded.
	Failures int
	// Retry is the wait before the next sync after a failure; 0 when it
	// succeeded.
	Retry time.Duration
}

// Run keeps v in sync with a remote until ctx is done, then returns nil. It syncs at once, then opts.Delay after the vault's branch moves
// (a write by this process or another one) and every opts.Every, each sync
// bounded by opts.Timeout. After a failure (the remote unreachable, a change of
// recipients waiting to be accepted, commits refused by the admission check) it
// waits a random time that doubles with each failure in a row up to
// opts.RetryCap, and tries again; writes meanwhile wait for that try. Each
// outcome goes to opts.Report. Run returns an error only when it cannot
// start: the vault cannot be watched for a reason other than
// vault.ErrWatchUnsupported (then it looks at the branch every opts.Delay
// instead).
func Run(ctx context.Context, v *vault.Vault, opts Options) error {
	opts = opts.withDefaults()
	changed, err := v.Watch(ctx)
	var poll <-chan time.Time
	switch {
	case errors.Is(err, vault.ErrWatchUnsupported):
		t := time.NewTicker(opts.Delay)
		defer t.Stop()
		poll = t.C
	case err != nil:
		return fmt.Errorf("autosync: %w", err)
	}
	w := watchLoop{v: v, opts: opts}
	timer := time.NewTimer(0) // the first sync at once
	defer timer.Stop()
	w.due, w.why = time.Now(), "start"
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changed:
			if !ok {
				changed = nil // ctx is done, or the repository went
				continue
			}
			w.moved(timer)
		case <-poll:
			w.moved(timer)
		case <-timer.C:
			w.sync(ctx)
			timer.Reset(time.Until(w.due))
		}
	}
}

func (o Options) withDefaults() Options {
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Delay <= 0 {
		o.Delay = DefaultDelay
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RetryCap <= 0 {
		o.RetryCap = DefaultRetryCap
	}
	o.Sync.AcceptRecipients = false
	o.Sync.AcceptWriters = false
	return o
}

// watchLoop is Run's state between events.
type watchLoop struct {
	v        *vault.Vault
	opts     Options
	synced   string    // the head the last successful sync left, which the remote holds
	failures int       // failed syncs in a row
	due      time.Time // the next sync
	why      string    // and why it is due
}

// moved brings the next sync forward to opts.Delay from now when the branch
// holds commits the last sync did not leave, unless it is due sooner or the
// loop is waiting after a failure.
func (w *watchLoop) moved(timer *time.Timer) {
	head, err := w.v.Head()
	if err != nil || head == w.synced || w.failures > 0 {
		return
	}
	if at := time.Now().Add(w.opts.Delay); at.Before(w.due) {
		w.due, w.why = at, "write"
		timer.Reset(w.opts.Delay)
	}
}

// sync runs one sync, reports it and sets the next one.
func (w *watchLoop) sync(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	t0 := time.Now()
	res, err := w.v.Sync(sctx, w.opts.Sync)
	cancel()
	if ctx.Err() != nil {
		return // stopping: a sync cut short is no outcome
	}
	rep := Report{Why: w.why, Result: res, Err: err, Took: time.Since(t0)}
	if err != nil {
		w.failures++
		d := min(w.opts.RetryCap, retryBase<<min(w.failures-1, 20))
		rep.Failures, rep.Retry = w.failures, d/2+rand.N(d/2+1)
		w.due, w.why = time.Now().Add(rep.Retry), "retry"
	} else {
		w.failures = 0
		w.synced = res.Head
		w.due, w.why = time.Now().Add(w.opts.Every), "interval"
		// A write that landed during the sync: its event may have come
		// before the sync moved the branch, so look now.
		if head, err := w.v.Head(); err == nil && head != w.synced {
			w.due, w.why = time.Now().Add(w.opts.Delay), "write"
		}
	}
	if w.opts.Report != nil {
		w.opts.Report(rep)
	}
}
