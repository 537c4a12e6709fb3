// Package memstore syncs a vault with an Anthropic memory store (the memory
// stores API): every version the store recorded becomes a commit, in order,
// authored by the version's actor at its time; local changes go back as
// creates, updates and deletes guarded by the store's content_sha256, and a
// change both sides made is merged on plaintext, conflicts kept in the file.
//
// A store path P is the vault path /memories/P.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/memvault/memvault/vault"
)

// Scheme starts a remote URL that names a memory store: memory-store:ID.
const Scheme = "memory-store:"

// StoreID returns the store a remote URL names, and whether it names one.
func StoreID(url string) (string, bool) {
	id, ok := strings.CutPrefix(url, Scheme)
	if !ok {
		return "", false
	}
	return id, true
}

// CheckStoreID refuses an id the API could not hold: it goes into request
// paths, so only letters, digits, '_' and '-'.
func CheckStoreID(id string) error {
	if id == "" || len(id) > 128 || strings.IndexFunc(id, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) >= 0 {
		return fmt.Errorf("%q is not a memory store id (memstore_… : letters, digits, '_' and '-')", id)
	}
	return nil
}

// Store is the memory store Sync works on, as the memory stores API offers
// it: the client that speaks the API lives with the other code that does
// (agent/memstoreapi), so this package knows nothing of the SDK.
type Store interface {
	// ID is the store's id, memstore_….
	ID() string
	// Versions lists the versions written at or after since (all when zero),
	// oldest first, without their content.
	Versions(ctx context.Context, since time.Time) ([]Version, error)
	// Contents returns the content of each version in want, all of them
	// written within [from, to], by version id.
	Contents(ctx context.Context, from, to time.Time, want map[string]bool) (map[string]string, error)
	// Content returns one version's content.
	Content(ctx context.Context, id string) (string, error)
	// Create makes a memory at the store's path and returns its id and the
	// version it wrote.
	Create(ctx context.Context, path, content string) (id, ver string, err error)
	// Update replaces a memory's content when its content is still the one
	// whose SHA-256 (hex) is want, or unconditionally when want is "", and
	// returns the version it wrote. It returns an error wrapping
	// [ErrPrecondition] when the content is another.
	Update(ctx context.Context, id, path, content, want string) (ver string, err error)
	// Remove deletes a memory when its content is still the one whose
	// SHA-256 is want (any when ""); a memory gone already is no error. It
	// returns an error wrapping [ErrPrecondition] when the content is another.
	Remove(ctx context.Context, id, path, want string) error
}

// ErrPrecondition is wrapped by a Store's error when the store's copy of a
// memory is not the one the change was made against (HTTP 409): Sync pulls,
// merges and tries again.
var ErrPrecondition = errors.New("the memory store changed it meanwhile")

// Version is one entry of a store's history, as the API reports it.
type Version struct {
	ID       string
	MemoryID string
	Op       string // "created", "modified" or "deleted"
	Path     string // the store's path, "" when redacted
	Content  string
	Redacted bool
	Actor    string // "session sesn_…", "api key …", "user …", "service account …", or ""
	Session  string
	Time     time.Time
}

// Options configure Sync.
type Options struct {
	Pull     bool      // pull only: push nothing
	Progress io.Writer // one line per phase and every 500 versions; nil for none
	Host     string    // names this machine in conflict markers
}

// Result says what Sync did.
type Result struct {
	Pulled    int      // store versions that became commits
	Redacted  []string // versions redacted in the store, whose content was not fetched
	Pushed    int      // creates, updates and deletes the store took
	Conflicts []string // vault paths left with conflict markers
	// SetAside are the versions the vault refused (a path no memory may
	// have, content over its limits), each "ID: why": passed over, now and
	// by later syncs, which go on past them.
	SetAside []string
}

// Sync pulls the store's versions since the last sync into the vault and,
// unless opts.Pull, pushes the vault's changes since then to the store. A push
// the store refuses because a memory changed there meanwhile (409) pulls,
// merges and tries again, a few rounds at most. An interrupted Sync resumes
// where it stopped: each version is applied at most once, and a change pushed
// is known on the next pull. Sync refuses a store whose ID fails
// [CheckStoreID] before it asks the store anything.
func Sync(ctx context.Context, v *vault.Vault, c Store, opts Options) (Result, error) {
	var res Result
	store := c.ID()
	if err := CheckStoreID(store); err != nil {
		return res, err
	}
	unlock, err := lockedfile.MutexAt(filepath.Join(v.Dir(), "memvault", "memory-store.lock")).Lock()
	if err != nil {
		return res, fmt.Errorf("memory store %s: %w", store, err)
	}
	defer unlock()
	st, err := loadState(v.Dir(), store)
	if err != nil {
		return res, fmt.Errorf("memory store %s: %w", store, err)
	}
	s := &syncer{v: v, c: c, id: store, st: st, opts: opts, res: &res}
	for round := 1; ; round++ {
		if err := s.pull(ctx); err != nil {
			return res, err
		}
		if opts.Pull {
			return res, nil
		}
		err := s.push(ctx)
		if !errors.Is(err, ErrPrecondition) || round == 5 {
			return res, err
		}
		s.say("the store changed during the push: pulling again (round %d)", round+1)
	}
}

// syncer is one Sync's work.
type syncer struct {
	v    *vault.Vault
	c    Store
	id   string // the store's id
	st   *state
	opts Options
	res  *Result
}

func (s *syncer) say(format string, args ...any) {
	if s.opts.Progress != nil {
		fmt.Fprintf(s.opts.Progress, format+"\n", args...)
	}
}

// errStorePath: a store path that does not start with "/".
var errStorePath = errors.New("the store's path does not start with /")

// vaultPath is the vault path of store path p.
func vaultPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%w: %q", errStorePath, p)
	}
	return vault.CleanPath(vault.Root + p)
}

// storePath is the store path of vault path p.
func storePath(p string) string { return strings.TrimPrefix(p, vault.Root) }
