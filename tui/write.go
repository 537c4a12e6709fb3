package tui

// A change the interface writes (an undo, a checkpoint, a saved edit, a new,
// moved or deleted file) runs beside it, one at a time. Writers take the
// vault's lock, which another memvault (an agent's MCP server, a sync) may
// hold for a while: a write still waiting for it after lockNotice says so,
// and esc gives it up, as it does any write that has not committed yet.

import (
	"context"
	"errors"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// lockNotice is how long a write waits for the vault's lock before the
// status bar says that it waits.
const lockNotice = 300 * time.Millisecond

// writeRun does the work of a write under ctx; it calls locked once it holds
// the vault's lock, and returns the message that reports the outcome.
type writeRun func(ctx context.Context, locked func()) tea.Msg

// writeJob is the write running now.
type writeJob struct {
	seq    int
	what   string // "roll back to 1a2b3c4", for the status bar
	cancel context.CancelFunc
	locked chan struct{} // closed once the lock is held
	done   chan tea.Msg  // the outcome, sent once
}

type (
	// writeWaitMsg says write seq has waited lockNotice for the lock.
	writeWaitMsg struct{ seq int }
	// writeLockedMsg says write seq got the lock after waiting for it.
	writeLockedMsg struct{ seq int }
	// writeDoneMsg carries the outcome of write seq.
	writeDoneMsg struct {
		seq int
		msg tea.Msg
	}
)

// startWrite runs a write, unless one runs already.
func (m *Model) startWrite(what string, run writeRun) tea.Cmd {
	if m.write != nil {
		m.setStatus("still writing: "+m.write.what+" (esc cancels it)", true)
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.writeSeq++
	j := &writeJob{seq: m.writeSeq, what: what, cancel: cancel, locked: make(chan struct{}), done: make(chan tea.Msg, 1)}
	m.write = j
	m.setStatus(what+"…", false)
	var once sync.Once
	locked := func() { once.Do(func() { close(j.locked) }) }
	return func() tea.Msg {
		go func() {
			defer cancel()
			j.done <- run(ctx, locked)
		}()
		return j.wait(false)()
	}
}

// wait waits for the outcome of j; unless waiting (for the lock, as the
// status bar says already), it tells when the lock is slow to come.
func (j *writeJob) wait(waiting bool) tea.Cmd {
	return func() tea.Msg {
		if waiting {
			select {
			case msg := <-j.done:
				return writeDoneMsg{seq: j.seq, msg: msg}
			case <-j.locked:
				return writeLockedMsg{seq: j.seq}
			}
		}
		t := time.NewTimer(lockNotice)
		defer t.Stop()
		select {
		case msg := <-j.done:
			return writeDoneMsg{seq: j.seq, msg: msg}
		case <-j.locked:
			return writeDoneMsg{seq: j.seq, msg: <-j.done}
		case <-t.C:
			return writeWaitMsg{seq: j.seq}
		}
	}
}

// onWrite follows the write: its wait for the lock, and its outcome, which
// goes where the outcome of its kind goes.
func (m *Model) onWrite(msg tea.Msg) tea.Cmd {
	j := m.write
	switch msg := msg.(type) {
	case writeWaitMsg:
		if j == nil || j.seq != msg.seq {
			return nil
		}
		holder := "another memvault"
		if m.sync.running {
			holder = "the sync under way"
		}
		m.setStatus("waiting for the vault's lock (held by "+holder+") to "+j.what+" · esc cancels", false)
		return j.wait(true)
	case writeLockedMsg:
		if j == nil || j.seq != msg.seq {
			return nil
		}
		m.setStatus(j.what+"…", false)
		return j.wait(false)
	case writeDoneMsg:
		if j != nil && j.seq == msg.seq {
			m.write = nil
		}
		_, cmd := m.Update(msg.msg)
		return cmd
	}
	return nil
}

// cancelWrite gives up the running write; it reports whether one ran.
func (m *Model) cancelWrite() bool {
	if m.write == nil {
		return false
	}
	m.write.cancel()
	m.setStatus("cancelling: "+m.write.what+"…", false)
	return true
}

// errProbe ends the empty change that waits for the vault's lock.
var errProbe = errors.New("the lock is free")

// waitLock waits until the vault's lock can be had, and calls locked then:
// the undo methods take the lock themselves and tell nothing of the wait, so
// an empty change (no commit) waits for it first. It returns ctx's error
// when the wait is given up.
func waitLock(ctx context.Context, v Vault, locked func()) error {
	ev, ok := v.(editVault)
	if !ok {
		locked()
		return nil
	}
	_, err := ev.UpdateCommit(ctx, vault.Meta{}, func(*vault.Tx) error {
		locked()
		return errProbe
	})
	if errors.Is(err, errProbe) {
		return nil
	}
	return err
}
