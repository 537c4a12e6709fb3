package tui

// G on a long history. The vault offers no count of its commits and no way to
// read the oldest without walking every commit down to them (about 2.7 s for
// 100,000), so a running interface walks the whole-vault history once, in the
// background, a moment after the first page shows it is long, and keeps its
// shape: how many commits there were from which head, and the oldest page.
// A later G reads only the commits made since that head; when they are a
// straight line on top of it (no merge, which can reorder what lies below),
// the oldest page is known and the count is the shape's plus theirs. G before
// the walk ends waits for it instead of walking a second time.

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// shapeDelay is how long after the first page of a long history the
// background walk starts, so that it does not compete with the first frame.
const shapeDelay = time.Second

// shapeRecent bounds how many commits made since the shape's head a G reads
// before it walks the whole history again.
const shapeRecent = 1000

// histShape is the whole-vault history as walked from head: total commits,
// and the oldest of them, newest first as the history lists them.
type histShape struct {
	head   string
	total  int
	oldest []vault.Record
}

type (
	// shapeDueMsg starts the background walk.
	shapeDueMsg struct{}
	// shapeMsg is the background walk's outcome.
	shapeMsg struct {
		shape *histShape
		err   error
	}
)

// shapeOf keeps the shape of all, the whole-vault history newest first.
func shapeOf(all []vault.Record, page int) *histShape {
	if len(all) == 0 {
		return nil
	}
	start := max(len(all)-page, 0)
	return &histShape{head: all[0].Commit, total: len(all), oldest: append([]vault.Record(nil), all[start:]...)}
}

// shapeCmd walks the whole-vault history for its shape.
func shapeCmd(ctx context.Context, v Vault, page int) tea.Cmd {
	return func() tea.Msg {
		all, err := v.Log(ctx, vault.LogOptions{})
		if err != nil {
			return shapeMsg{err: err}
		}
		return shapeMsg{shape: shapeOf(all, page)}
	}
}

// oldestFromShape answers a jump to the oldest commits from shape, reading only
// the commits made since its head; ok is false when they are not a straight
// line on top of it, or too many, and the history must be walked.
func oldestFromShape(ctx context.Context, v Vault, shape *histShape, msg *logMsg) (ok bool, err error) {
	recent, err := v.Log(ctx, vault.LogOptions{Limit: shapeRecent})
	if err != nil {
		return false, err
	}
	for k, r := range recent {
		if r.Commit == shape.head {
			msg.recs = append([]vault.Record(nil), shape.oldest...)
			msg.base = shape.total + k - len(shape.oldest)
			msg.done = true
			msg.at = shape.oldest[len(shape.oldest)-1].Commit
			return true, nil
		}
		if len(r.Parents) > 1 {
			return false, nil // a merge: what it brought may lie anywhere below
		}
	}
	return false, nil
}

// wantsShape tells whether the history is the kind a shape answers for, long
// enough to need one, and has none yet.
func (h *historyModel) wantsShape() bool {
	return h.scope == "" && h.pickaxe == "" && h.shape == nil && !h.shaping && !h.done && len(h.recs) > 0
}

// onShape keeps a walk's shape, and goes to the oldest commit if G waited.
func (h *historyModel) onShape(msg shapeMsg) tea.Cmd {
	h.shaping = false
	if msg.err == nil && msg.shape != nil {
		h.shape = msg.shape
	}
	if h.bottomWanted {
		h.bottomWanted = false
		return h.jumpHistory("")
	}
	return nil
}
