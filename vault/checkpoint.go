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
	"github.com/memvault/memvault/vault/seal"
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
	// A sealed vault's host sees the tag's name and message sealed, under
	// the key of the current tree.
	ref, message := name, msg+"\n"
	k, err := v.currentKey()
	if err != nil {
		return Checkpoint{}, err
	}
	if k != nil {
		if ref, err = sealedTagName(k, name); err != nil {
			return Checkpoint{}, fmt.Errorf("vault: checkpoint name: %w: %w", err, ErrInvalid)
		}
		if message, err = k.SealMessage(seal.Message{Text: msg}); err != nil {
			return Checkpoint{}, fmt.Errorf("vault: checkpoint %q: %w", name, err)
		}
		// The tag name is new only under this key: the same name made
		// before a rotation is sealed under the key of its time, and one
		// made before the vault was sealed is stored as it is. A name is
		// taken once, as in the plain format, by whatever Checkpoints lists.
		taken, err := v.checkpointListed(ctx, k, name)
		if err != nil {
			return Checkpoint{}, err
		}
		if taken {
			return Checkpoint{}, existsError(fmt.Sprintf("vault: checkpoint %q already exists", name))
		}
	}
	t, err := w.CreateTag(ref, h, tagger, message)
	if errors.Is(err, fs.ErrExist) {
		return Checkpoint{}, existsError(fmt.Sprintf("vault: checkpoint %q already exists", name))
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("vault: checkpoint %q: %w", name, err)
	}
	cp := checkpointOf(t)
	cp.Name, cp.Message = name, msg
	return cp, nil
}

// Checkpoints returns every checkpoint, oldest first (then by name). In a
// sealed vault each name and message is opened under the current key, or
// else under the key of its commit's tree; one that opens under neither is
// listed as it is stored.
func (v *Vault) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	tags, err := v.repo.Tags()
	if err != nil {
		return nil, fmt.Errorf("vault: checkpoints: %w", err)
	}
	k, err := v.currentKey()
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint, len(tags))
	for i, t := range tags {
		out[i] = checkpointOf(t)
		if k != nil && !v.openCheckpoint(&out[i], k, t.Target) {
			v.readHistoryKeys(ctx)
			v.openCheckpoint(&out[i], k, t.Target)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// checkpointListed reports whether Checkpoints, in a sealed vault whose
// current key is k, lists a checkpoint called name.
func (v *Vault) checkpointListed(ctx context.Context, k *seal.Key, name string) (bool, error) {
	tags, err := v.repo.Tags()
	if err != nil {
		return false, fmt.Errorf("vault: checkpoint %q: %w", name, err)
	}
	for _, t := range tags {
		c := checkpointOf(t)
		if !v.openCheckpoint(&c, k, t.Target) {
			v.readHistoryKeys(ctx)
			v.openCheckpoint(&c, k, t.Target)
		}
		if c.Name == name {
			return true, nil
		}
	}
	return false, nil
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
