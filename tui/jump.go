package tui

// Go to a commit (:): the revision is resolved by the vault's lookup of
// revisions (a hash or a prefix of one, a checkpoint, main~3), not by a walk
// of the history, and the commit shows at once. A commit among the loaded
// records is selected there; one further down is placed in the history by
// the vault's walk of the history's shape (LogAround), beside the interface,
// which esc stops.

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// minHashDigits is the shortest prefix of a hash the vault resolves.
const minHashDigits = 4

type (
	// jumpMsg is the commit rev resolved to, with its record.
	jumpMsg struct {
		rev  string
		hash string
		ch   *vault.Change
		err  error
	}
)

// jump resolves rev and shows its commit.
func (m *Model) jump(rev string) tea.Cmd {
	if rev == "" {
		return nil
	}
	m.focus = paneHistory
	m.setStatus("looking for "+sanitize(rev)+"…", false)
	ctx, v := m.ctx, m.v
	return func() tea.Msg {
		h, err := v.Resolve(ctx, rev)
		if err != nil {
			return jumpMsg{rev: rev, err: err}
		}
		ch, err := v.Show(ctx, h)
		return jumpMsg{rev: rev, hash: h, ch: ch, err: err}
	}
}

// onJump selects the commit a jump found, or shows it and places it in the
// history by a walk.
func (m *Model) onJump(msg jumpMsg) tea.Cmd {
	if msg.err != nil {
		err := msg.err
		if errors.Is(err, vault.ErrUnknownRevision) && isHex(msg.rev) && len(msg.rev) < minHashDigits {
			err = fmt.Errorf("%w; a commit hash needs at least %d hex digits (%s has %d)", err, minHashDigits, sanitize(msg.rev), len(msg.rev))
		}
		m.setStatus(fmt.Sprintf("go to %s: %v", sanitize(msg.rev), err), true)
		return nil
	}
	m.status = ""
	h := &m.hist
	for i, j := range h.view {
		if h.recs[j].Commit == msg.hash {
			h.cursor = i
			m.source, m.diffMarks = paneHistory, false
			return m.follow(false)
		}
	}
	// Not loaded: the commit shows now, its place in the history follows.
	r := msg.ch.Record
	req := contentReq{show: showCommit, rev: msg.hash}
	m.content.set(req, "commit "+short(msg.hash), bodyDiff, h.commitDetails(&r),
		diffLines(msg.ch.Files, "This commit changed no memory file."))
	m.source = paneHistory
	return h.jumpHistory(msg.hash)
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// cancelJump stops a walk placing a commit in the history; it reports
// whether one ran.
func (h *historyModel) cancelJump() bool {
	if h.jumping == "" || h.cancelLog == nil {
		return false
	}
	h.cancelLog()
	what := "stopped: the commit shows, the history stays where it was"
	if h.jumping == "the first commit" {
		what = "stopped: the history stays where it was"
	}
	h.jumping, h.loading = "", false
	h.setStatus(what, false)
	return true
}
