package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/memvault/memvault/gitlog"
)

// The back-off between sync rounds after the remote's branch moved under a push:
// each wait is drawn at random from [d/2, d), d doubling from backoffBase up to
// backoffCap. Clones of one vault pushing at once then spread out instead of
// colliding again in step, and a busy remote sees about one round a second from
// each clone at worst.
const (
	backoffBase = 50 * time.Millisecond
	backoffCap  = 2 * time.Second
)

// backoff is the wait before round n+1 after n rounds were rejected (n >= 1).
func backoff(n int) time.Duration {
	d := backoffCap
	if n < 16 {
		d = min(backoffCap, backoffBase<<(n-1))
	}
	return d/2 + rand.N(d/2)
}

// retryRounds runs round until it returns nil or fails for a reason other than a
// branch that moved: the local one (gitlog.ErrStale, a writer committed while
// the round merged: again at once) or the remote's (gitlog.ErrRejected: again
// after a back-off, said on progress). Only ctx bounds the rounds. When ctx
// ends after a rejection, the error wraps both the last rejection and
// ErrTimeout (a deadline) or context.Canceled.
func retryRounds(ctx context.Context, progress io.Writer, round func() error) error {
	var rejected error
	for n := 0; ; {
		err := round()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, gitlog.ErrStale):
			// A local commit: nothing to wait for.
		case errors.Is(err, gitlog.ErrRejected):
			n++
			rejected = err
			d := backoff(n)
			if progress != nil {
				fmt.Fprintf(progress, "The remote is busy: its branch moved before our push (round %d); merging again in %v\n", n, d.Round(time.Millisecond))
			}
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return gaveUp(ctx, n, rejected)
			}
		case rejected != nil && ctx.Err() != nil:
			return gaveUp(ctx, n, rejected)
		default:
			return err
		}
	}
}

// gaveUp is the error of a sync that ctx stopped after n rounds the remote
// rejected, the last with rejected.
func gaveUp(ctx context.Context, n int, rejected error) error {
	why := error(ErrTimeout)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		why = ctx.Err()
	}
	return fmt.Errorf("vault: sync: %w after %d rounds, the remote's branch moving before each push (another clone kept pushing first): %w", why, n, rejected)
}

// timedOut makes err wrap ErrTimeout when ctx's deadline has passed, whichever
// step of a sync or clone it stopped: a transfer says so itself, but a wait for
// the vault's lock, the admission check or a merge return only the context's
// error.
func timedOut(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrTimeout) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", err, ErrTimeout)
}
