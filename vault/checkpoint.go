package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/memvault/memvault/gitlog"
)

// Checkpoint is a named point in the vault's history: an annotated git tag
// refs/tags/<Name>, which travels with the repository.
type Checkpoint struct {
	Name    string    `json:"name"`
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
}

// Checkpoint names the commit rev names (see Resolve; "" is main) name, with the
// message msg, and returns it. A name follows git's rules for a tag (no spaces,
// no "..", no "~^:?*[\", no part starting with "." or ending in ".lock", ...),
// does not start with "-", and is not "main", "HEAD" or a full commit hash, which
// would not resolve to it. The error wraps ErrInvalid for a bad name, ErrExist if
// the checkpoint exists (checkpoints are never moved), and ErrUnknownRevision for
// a bad rev.
func (v *Vault) Checkpoint(ctx context.Context, name, rev, msg string) (Checkpoint, error) {
	if err := v.refuseSealed("checkpoint"); err != nil {
		return Checkpoint{}, err
	}
	if err := gitlog.CheckRefName(name); err != nil {
		return Checkpoint{}, fmt.Errorf("vault: checkpoint name: %w: %w", err, ErrInvalid)
	}
	if name == "main" || name == "HEAD" || len(name) == 40 && isHex(name) {
		return Checkpoint{}, fmt.Errorf("vault: checkpoint name %q would be read as a revision: %w", name, ErrInvalid)
	}
	if rev == "" {
		rev = "main"
	}
	h, err := v.resolve(rev)
	if err != nil {
		return Checkpoint{}, err
	}
	if msg = strings.TrimSpace(msg); msg == "" {
		msg = "checkpoint " + name
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	tagger := gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: v.opts.Now()}
	t, err := w.CreateTag(name, h, tagger, msg+"\n")
	if errors.Is(err, fs.ErrExist) {
		return Checkpoint{}, existsError(fmt.Sprintf("vault: checkpoint %q already exists", name))
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("vault: checkpoint %q: %w", name, err)
	}
	return checkpointOf(t), nil
}

// Checkpoints returns every checkpoint, oldest first (then by name).
func (v *Vault) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	tags, err := v.repo.Tags()
	if err != nil {
		return nil, fmt.Errorf("vault: checkpoints: %w", err)
	}
	out := make([]Checkpoint, len(tags))
	for i, t := range tags {
		out[i] = checkpointOf(t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

func checkpointOf(t gitlog.Tag) Checkpoint {
	return Checkpoint{Name: t.Name, Commit: t.Target.String(), Time: t.Tagger.When, Message: strings.TrimRight(t.Message, "\n")}
}

// existsError is an error that says itself that something exists already, and
// wraps ErrExist without repeating its text.
type existsError string

func (e existsError) Error() string { return string(e) }

// Is reports whether target is ErrExist.
func (e existsError) Is(target error) bool { return target == ErrExist }
