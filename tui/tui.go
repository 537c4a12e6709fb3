// Package tui is memvault's terminal interface, a Bubble Tea program in which a
// person browses what an agent remembered: the memory tree, each file with line
// numbers, and the vault's history with decrypted diffs, from which any change
// can be undone by a new commit.
//
// New makes the root model for a vault and Run runs it on a terminal. The model
// does no I/O in Update: reads, decryption and diffs run as commands, and their
// results, which name what they were asked for, are dropped once stale.
package tui

import (
	"context"
	"errors"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/memvault/memvault/vault"
)

// Vault is what the interface reads and changes. *vault.Vault implements it.
type Vault interface {
	// Snapshot returns the memory tree at the head.
	Snapshot(ctx context.Context) (*vault.Snapshot, error)
	// SnapshotAt returns the memory tree at a revision: a file as it was.
	SnapshotAt(ctx context.Context, rev string) (*vault.Snapshot, error)
	// Log returns history records, newest first, a page at a time.
	Log(ctx context.Context, opts vault.LogOptions) ([]vault.Record, error)
	// LogOldest returns the oldest records of the whole history, newest
	// first, and how many commits it holds: G without the walk of every record.
	LogOldest(ctx context.Context, n int) ([]vault.Record, int, error)
	// LogAround returns the records of the whole history around a commit,
	// where they start, and how many commits it holds: : without the walk of
	// every record above the commit.
	LogAround(ctx context.Context, target string, n int) ([]vault.Record, int, int, error)
	// Show returns a commit with the decrypted diff of each file it changed.
	Show(ctx context.Context, rev string) (*vault.Change, error)
	// Diff returns the decrypted changes between two revisions.
	Diff(ctx context.Context, fromRev, toRev, path string) ([]vault.FileChange, error)
	// Restore makes a file what it was at a revision, as a new commit.
	Restore(ctx context.Context, meta vault.Meta, path, rev string) (*vault.UndoResult, error)
	// Revert undoes one commit, as a new commit.
	Revert(ctx context.Context, meta vault.Meta, rev string) (*vault.UndoResult, error)
	// Rollback makes all of /memories what it was at a revision, as a new commit.
	Rollback(ctx context.Context, meta vault.Meta, rev string) (*vault.UndoResult, error)
	// Checkpoint names a commit.
	Checkpoint(ctx context.Context, name, rev, msg string) (vault.Checkpoint, error)
	// Checkpoints lists the named commits.
	Checkpoints(ctx context.Context) ([]vault.Checkpoint, error)
	// Resolve returns the full hash of the commit a revision (a hash, a prefix
	// of one, a checkpoint name) names.
	Resolve(ctx context.Context, rev string) (string, error)
	// IdentityFile names the identity the vault decrypts with.
	IdentityFile() string
}

// Options configure the interface. The zero value is ready to use.
type Options struct {
	// Now is the clock relative times are counted from, and its location the
	// one absolute times are shown in; nil means time.Now.
	Now func() time.Time
	// PollInterval is how often the head is checked for commits made by others;
	// 0 means 500ms, a negative value never. Where the vault can be watched
	// (vault.Vault.Watch, on Linux), a commit shows as soon as it is made and
	// the check runs only every watchedPoll (or PollInterval, if longer), as a
	// fallback.
	PollInterval time.Duration
	// PageSize is how many history records are loaded at a time; 0 means 200.
	PageSize int
	// NoColor draws without colour, as NO_COLOR asks.
	NoColor bool
	// Light assumes a light background until the terminal says which it has.
	Light bool
	// Agent is who the commits of undos made here say made them; "" means
	// "memvault-ui".
	Agent string
	// Marks, when set, words the reasons a pending change deserves a close
	// look in the review pane, one a line (agent.Marks gives them; the
	// interface does not judge content itself).
	Marks func(vault.PendingChange) []string
}

// watchedPoll is how often the head is checked while the vault is watched.
const watchedPoll = 5 * time.Second

func (o *Options) fill() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PollInterval == 0 {
		o.PollInterval = 500 * time.Millisecond
	}
	if o.PageSize <= 0 {
		o.PageSize = 200
	}
	if o.Agent == "" {
		o.Agent = "memvault-ui"
	}
}

// Run shows the interface for v on the terminal at in and out until the user
// quits or ctx is done.
func Run(ctx context.Context, v Vault, opts Options, in io.Reader, out io.Writer) error {
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err := tea.NewProgram(New(ctx, v, opts), popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
