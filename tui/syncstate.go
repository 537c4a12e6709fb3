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

// statusEvery is how often the remote's state is read again while nothing
// else asks: another process may have synced. statusDelay is how long a read
// waits after the head moved, so that it stays off the first frame's path and
// a burst of commits costs one read: on a long history that came from
// elsewhere the first read indexes it, seconds of work.
const (
	statusEvery = 30 * time.Second
	statusDelay = 2 * time.Second
)

type (
	// syncStatusMsg is the vault's status as read by the seq-th request.
	syncStatusMsg struct {
		st  *vault.Status
		seq int
		err error
	}
	// statusTickMsg asks for the status again, on the slow timer.
	statusTickMsg struct{}
	// statusDueMsg ends the wait after the head moved.
	statusDueMsg struct{}
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
	*common
	state        *vault.Status
	err          error
	asked, got   int  // the number of the last status read asked for, and applied
	busy, again  bool // a read runs; another is wanted once it ends
	stale, due   bool // the head moved since the last read; a read is due shortly
	last         time.Time
	lastErr      error
	running      bool
	cancel       context.CancelFunc
	progress     *progressLine
	progressTick bool
	before       *vault.Status // the state as a sync started, for its summary
}

// readStatus asks for the vault's status after the head moved: shortly, in
// one read for every move meanwhile (at once where the interface does not
// poll, as in tests).
func (s *syncState) readStatus() tea.Cmd {
	if s.opts.PollInterval < 0 {
		return s.readNow()
	}
	s.stale = true
	if s.due {
		return nil
	}
	s.due = true
	return tea.Tick(statusDelay, func(time.Time) tea.Msg { return statusDueMsg{} })
}

// readNow starts a read of the vault's status, or, while one runs, asks for
// another once it ends.
func (s *syncState) readNow() tea.Cmd {
	sv, ok := s.v.(statusVault)
	if !ok {
		return nil
	}
	if s.busy {
		s.again = true
		return nil
	}
	s.busy = true
	s.asked++
	ctx, seq := s.ctx, s.asked
	return func() tea.Msg {
		st, err := sv.Status(ctx)
		return syncStatusMsg{st: st, seq: seq, err: err}
	}
}

func statusTick() tea.Cmd {
	return tea.Tick(statusEvery, func(time.Time) tea.Msg { return statusTickMsg{} })
}

// Update handles the status reads and the sync the bar asked for.
func (s *syncState) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case syncStatusMsg:
		return s.onStatus(msg)
	case statusTickMsg:
		return tea.Batch(s.readNow(), statusTick())
	case statusDueMsg:
		s.due = false
		if s.stale {
			s.stale = false
			return s.readNow()
		}
	case syncTickMsg:
		s.progressTick = false
		if s.running {
			return s.tick()
		}
	case syncDoneMsg:
		return s.onDone(msg)
	}
	return nil
}

func (s *syncState) onStatus(msg syncStatusMsg) tea.Cmd {
	s.busy = false
	if msg.seq > s.got {
		s.got = msg.seq
		s.state, s.err = msg.st, msg.err
	}
	if s.again {
		s.again = false
		return s.readNow()
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
func (s *syncState) start() tea.Cmd {
	sv, ok := s.v.(*vault.Vault) // a sync needs a real vault, not a face's store
	switch {
	case !ok:
		return nil
	case s.running:
		s.setStatus("a sync is running: esc cancels it", false)
		return nil
	case s.state != nil && len(s.state.Remotes) == 0:
		s.setStatus("no remote to sync with: memvault remote add origin URL", true)
		return nil
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.running, s.cancel, s.progress = true, cancel, &progressLine{}
	s.before = s.state // its remotes' names, for the summary
	opts := vault.SyncOptions{Progress: s.progress}
	cmd := func() tea.Msg {
		defer cancel()
		res, err := sv.Sync(ctx, opts)
		return syncDoneMsg{res: res, err: err}
	}
	return tea.Batch(cmd, s.tick())
}

// tick redraws the progress of a running sync in a moment.
func (s *syncState) tick() tea.Cmd {
	if s.progressTick {
		return nil
	}
	s.progressTick = true
	return tea.Tick(250*time.Millisecond, func(time.Time) tea.Msg { return syncTickMsg{} })
}

// cancelSync stops a running sync; it reports whether one ran.
func (s *syncState) cancelSync() bool {
	if !s.running {
		return false
	}
	s.cancel()
	s.setStatus("cancelling the sync…", false)
	return true
}

func (s *syncState) onDone(msg syncDoneMsg) tea.Cmd {
	s.running, s.cancel = false, nil
	s.last, s.lastErr = s.opts.Now(), msg.err
	switch {
	case errors.Is(msg.err, context.Canceled):
		s.setStatus("sync cancelled", false)
	case errors.Is(msg.err, vault.ErrRecipientsChanged):
		s.setStatus("sync: the remote changed the recipients; check them, then memvault sync --accept-recipients", true)
	case msg.err != nil:
		s.setStatus(fmt.Sprintf("sync: %v", msg.err), true)
	default:
		s.setStatus("sync: "+s.summary(msg.res), len(msg.res.Conflicts) > 0)
	}
	return s.readNow()
}

// summary says what a sync did, in words, most telling first: what came and
// went, the files left in conflict, and where the vault is now.
func (s *syncState) summary(res vault.SyncResult) string {
	remote := "the remote"
	if s.before != nil && len(s.before.Remotes) > 0 {
		remote = sanitize(s.before.Remotes[0].Name)
	}
	var what string
	switch res.Action {
	case "up to date":
		what = "up to date with " + remote
	case "fast-forward", "pull":
		what = "took the new commits of " + remote
	case "merge":
		what = "merged with " + remote
	case "push":
		what = "sent this vault's new commits to " + remote
	default:
		what = sanitize(res.Action)
	}
	if n := len(res.Conflicts); n > 0 {
		what += fmt.Sprintf(", %s left in conflict: %s (C lists them)", plural(n, "file"), sanitize(strings.Join(res.Conflicts, ", ")))
	}
	if res.Pushed && res.Action != "push" && res.Action != "up to date" {
		what += ", sent back"
	}
	if res.Head != "" && res.Action != "up to date" {
		what += "; main is at " + short(res.Head)
	}
	if res.WentBack {
		what += fmt.Sprintf(" (the remote had gone back from %s)", short(res.Seen))
	}
	return what
}

// View is the status bar's account of the remotes, "" when the vault
// has none and nothing is in conflict.
func (s *syncState) View() string {
	var parts []string
	if s.running {
		p := "syncing…"
		if line := s.progress.String(); line != "" {
			p = "syncing: " + sanitize(line)
		}
		parts = append(parts, p+" (esc cancels)")
	}
	if s.state != nil {
		for _, r := range s.state.Remotes {
			if !r.Known {
				parts = append(parts, sanitize(r.Name)+" never synced")
				continue
			}
			parts = append(parts, fmt.Sprintf("%s ↓%d ↑%d", sanitize(r.Name), r.Behind, r.Ahead)) // to pull, to push
		}
		if len(s.state.Remotes) > 0 && !s.last.IsZero() && !s.running {
			parts = append(parts, "synced "+relTime(s.last, s.opts.Now()))
		}
	}
	if s.lastErr != nil && !errors.Is(s.lastErr, context.Canceled) && !s.running {
		parts = append(parts, s.st.StatusError.Render("last sync failed"))
	}
	if s.state != nil && len(s.state.Conflicts) > 0 {
		parts = append(parts, s.st.StatusError.Render(plural(len(s.state.Conflicts), "conflict")))
	}
	if s.state != nil && s.state.Pending > 0 {
		parts = append(parts, s.st.StatusError.Render(fmt.Sprintf("%d pending (P)", s.state.Pending)))
	}
	if s.err != nil {
		parts = append(parts, s.st.StatusError.Render("status unknown"))
	}
	return strings.Join(parts, " · ")
}
