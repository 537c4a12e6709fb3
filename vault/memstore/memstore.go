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

	"github.com/anthropics/anthropic-sdk-go/option"
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

// Options configure Sync.
type Options struct {
	// API are the SDK's options: the key and address by default come from
	// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, as the SDK reads them.
	API      []option.RequestOption
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
// is known on the next pull.
func Sync(ctx context.Context, v *vault.Vault, store string, opts Options) (Result, error) {
	var res Result
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
	s := &syncer{v: v, c: newClient(store, opts.API), st: st, opts: opts, res: &res}
	for round := 1; ; round++ {
		if err := s.pull(ctx); err != nil {
			return res, err
		}
		if opts.Pull {
			return res, nil
		}
		err := s.push(ctx)
		if !errors.Is(err, errPrecondition) || round == 5 {
			return res, err
		}
		s.say("the store changed during the push: pulling again (round %d)", round+1)
	}
}

// syncer is one Sync's work.
type syncer struct {
	v    *vault.Vault
	c    *client
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
