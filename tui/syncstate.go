package tui

// The remote's state in the status bar: for each remote how many commits it
// has that the vault lacks (↓, to pull) and the other way (↑, to push), as of
// the last sync, pull or push; the files a merge left in conflict; when the
// interface last synced and what went wrong. p syncs with the default remote,
// showing the server's progress, and esc cancels it. Every read runs in a
// command: the status is worked out beside the interface, never in Update.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// statusVault is what the remote's state needs; *vault.Vault has it.
type statusVault interface {
	Status(ctx context.Context) (*vault.Status, error)
}

// syncVault is what a sync from the interface needs; *vault.Vault has it.
type syncVault interface {
	Sync(ctx context.Context, opts vault.SyncOptions) (vault.SyncResult, error)
}

// statusEvery is how often the remote's state is read again while nothing
// else asks: another process may have synced.
const statusEvery = 30 * time.Second

type (
	// syncStatusMsg is the vault's status as read by the seq-th request.
	syncStatusMsg struct {
		st  *vault.Status
		seq int
		err error
	}
	// statusTickMsg asks for the status again, on the slow timer.
	statusTickMsg struct{}
	// syncDoneMsg is the outcome of a sync started here.
	syncDoneMsg struct {
		res vault.SyncResult
		err error
	}
	// syncTickMsg redraws a running sync's progress.
	syncTickMsg struct{}
)

// syncState is what the status bar knows of the remotes.
type syncState struct {
	st           *vault.Status
	err          error
	asked, got   int  // the number of the last status read asked for, and applied
	busy, again  bool // a read runs; another is wanted once it ends
	last         time.Time
	lastErr      error
	running      bool
	cancel       context.CancelFunc
	progress     *progressLine
	progressTick bool
}

// readStatus starts a read of the vault's status, or, while one runs, asks
// for another once it ends: a burst of commits costs at most two reads.
func (m *Model) readStatus() tea.Cmd {
	sv, ok := m.v.(statusVault)
	if !ok {
		return nil
	}
	s := &m.sync
	if s.busy {
		s.again = true
		return nil
	}
	s.busy = true
	s.asked++
	ctx, seq := m.ctx, s.asked
	return func() tea.Msg {
		st, err := sv.Status(ctx)
		return syncStatusMsg{st: st, seq: seq, err: err}
	}
}

func statusTick() tea.Cmd {
	return tea.Tick(statusEvery, func(time.Time) tea.Msg { return statusTickMsg{} })
}

func (m *Model) onSyncStatus(msg syncStatusMsg) tea.Cmd {
	s := &m.sync
	s.busy = false
	if msg.seq > s.got {
		s.got = msg.seq
		s.st, s.err = msg.st, msg.err
	}
	if s.again {
		s.again = false
		return m.readStatus()
	}
	return nil
}

// progressLine keeps the last line a transfer reported, for the status bar.
type progressLine struct {
	mu   sync.Mutex
	line string
}

// Write implements io.Writer: the server's progress, lines ended by \r or \n.
func (p *progressLine) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := strings.TrimRight(string(b), "\r\n")
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = s[i+1:]
	}
	if s != "" {
		p.line = s
	}
	return len(b), nil
}

func (p *progressLine) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.line
}

// startSync syncs with the default remote.
func (m *Model) startSync() tea.Cmd {
	sv, ok := m.v.(syncVault)
	s := &m.sync
	switch {
	case !ok:
		return nil
	case s.running:
		m.setStatus("a sync is running: esc cancels it", false)
		return nil
	case s.st != nil && len(s.st.Remotes) == 0:
		m.setStatus("no remote to sync with: memvault remote add origin URL", true)
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	s.running, s.cancel, s.progress = true, cancel, &progressLine{}
	opts := vault.SyncOptions{Progress: s.progress}
	cmd := func() tea.Msg {
		defer cancel()
		res, err := sv.Sync(ctx, opts)
		return syncDoneMsg{res: res, err: err}
	}
	return tea.Batch(cmd, m.syncTick())
}

func (m *Model) syncTick() tea.Cmd {
	if m.sync.progressTick {
		return nil
	}
	m.sync.progressTick = true
	return tea.Tick(250*time.Millisecond, func(time.Time) tea.Msg { return syncTickMsg{} })
}

func (m *Model) onSyncTick() tea.Cmd {
	m.sync.progressTick = false
	if !m.sync.running {
		return nil
	}
	return m.syncTick()
}

// cancelSync stops a running sync; it reports whether one ran.
func (m *Model) cancelSync() bool {
	if !m.sync.running {
		return false
	}
	m.sync.cancel()
	m.setStatus("cancelling the sync…", false)
	return true
}

func (m *Model) onSyncDone(msg syncDoneMsg) tea.Cmd {
	s := &m.sync
	s.running, s.cancel = false, nil
	s.last, s.lastErr = m.opts.Now(), msg.err
	switch {
	case errors.Is(msg.err, context.Canceled):
		m.setStatus("sync cancelled", false)
	case errors.Is(msg.err, vault.ErrRecipientsChanged):
		m.setStatus("sync: the remote changed the recipients; check them, then memvault sync --accept-recipients", true)
	case msg.err != nil:
		m.setStatus(fmt.Sprintf("sync: %v", msg.err), true)
	default:
		what := "sync: " + msg.res.Action
		if n := len(msg.res.Conflicts); n > 0 {
			what += fmt.Sprintf(", %s left in conflict: %s", plural(n, "file"), strings.Join(msg.res.Conflicts, ", "))
		}
		m.setStatus(what, len(msg.res.Conflicts) > 0)
	}
	return tea.Batch(m.readHead(false), m.readStatus())
}

// syncSummary is the status bar's account of the remotes, "" when the vault
// has none and nothing is in conflict.
func (m *Model) syncSummary() string {
	s := &m.sync
	var parts []string
	if s.running {
		p := "syncing…"
		if line := s.progress.String(); line != "" {
			p = "syncing: " + sanitize(line)
		}
		parts = append(parts, p+" (esc cancels)")
	}
	if s.st != nil {
		for _, r := range s.st.Remotes {
			if !r.Known {
				parts = append(parts, sanitize(r.Name)+" never synced")
				continue
			}
			parts = append(parts, fmt.Sprintf("%s ↓%d ↑%d", sanitize(r.Name), r.Ahead, r.Behind))
		}
		if len(s.st.Remotes) > 0 && !s.last.IsZero() && !s.running {
			parts = append(parts, "synced "+relTime(s.last, m.opts.Now()))
		}
	}
	if s.lastErr != nil && !errors.Is(s.lastErr, context.Canceled) && !s.running {
		parts = append(parts, m.st.StatusError.Render("last sync failed"))
	}
	if s.st != nil && len(s.st.Conflicts) > 0 {
		parts = append(parts, m.st.StatusError.Render(plural(len(s.st.Conflicts), "conflict")))
	}
	if s.err != nil {
		parts = append(parts, m.st.StatusError.Render("status unknown"))
	}
	return strings.Join(parts, " · ")
}
