package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// Clone creates a vault at dir (which must not exist or be empty) from the vault
// at url, recorded as remote DefaultRemote, and opens it. The identity at
// opts.IdentityFile must be one of the vault's recipients. With
// co.SkipRefused it returns the entries it left out. On any error dir is
// removed again. The error wraps ErrNotRecipient (the message names the
// identity's recipient, for a current recipient to add), ErrNoIdentity,
// ErrNotVault when the remote holds no vault, ErrRefused or ErrUnsigned when
// its history holds what memvault does not admit, ErrUnreachable or ErrAuth
// from the transfer, and ErrTimeout when ctx's deadline passed, whatever step
// it stopped.
func Clone(ctx context.Context, url, dir string, opts Options, co CloneOptions) (*Vault, []Refusal, error) {
	v, err := clone(ctx, url, dir, opts, co)
	if err != nil || !co.SkipRefused {
		return v, nil, err
	}
	rs, err := v.LeaveOutRefused(ctx)
	if err != nil {
		v.Close()
		removeClone(dir, false)
		return nil, nil, err
	}
	return v, rs, nil
}

// CloneOptions configure Clone.
type CloneOptions struct {
	Auth     Credentials
	Progress io.Writer
	// ExpectWriters pins the writers to trust, by fingerprint (SHA256:…, as
	// memvault writers prints them): the clone takes a history only when each
	// of its first commits is an ancestor of a commit one of them signed, and
	// fails with an error wrapping ErrNotVouched otherwise. Empty: the
	// clone trusts the writers it first sees (Trust is asked about them).
	ExpectWriters []string
	// SkipRefused clones a remote whose history holds entries memvault does
	// not admit, where Clone otherwise fails with ErrRefused: the clone's main
	// branch gets one more commit on the remote's, whose tree leaves those
	// entries out and names each (see Vault.LeaveOutRefused).
	SkipRefused bool
	// Trust, when set, is asked about the new clone once its history is
	// fetched, admitted and found readable, before anything is left out and
	// before it is handed back: a new clone has nothing to compare the
	// recipients and writers it found with, so only a person (or the keys
	// they expect) can say whether to take them. An error from it refuses
	// the clone: dir is removed again, and Clone returns that error.
	Trust func(CloneFound) error
}

// CloneFound is what a new clone is about to trust.
type CloneFound struct {
	Recipients []keys.Recipient // whoever holds one of these reads what is written
	Yours      []bool           // Yours[i]: Recipients[i] is a key of the identity in use
	Writers    []keys.Writer    // whose signed commits the clone takes
	HasWriters bool             // false for a vault from before writers
}

func clone(ctx context.Context, url, dir string, opts Options, co CloneOptions) (v *Vault, err error) {
	trust := co.Trust
	defer func() { err = timedOut(ctx, err) }()
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := checkRemoteURL(url); err != nil {
		return nil, err
	}
	id, err := keys.ReadFile(opts.IdentityFile, opts.Passphrase, false)
	if err != nil {
		return nil, err
	}
	existed := true
	if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
		existed = false
	}
	repo, err := gitlog.Init(dir)
	if err != nil {
		return nil, fmt.Errorf("vault: clone into %s: %w", dir, err)
	}
	repo.SetClock(opts.Now)
	defer func() {
		if err != nil {
			if v != nil {
				v.Close()
				v = nil
			}
			removeClone(dir, existed)
		}
	}()
	h, err := cloneFetch(ctx, repo, url, opts, id, co)
	if err != nil {
		return nil, err
	}
	if v, err = Open(ctx, dir, opts); err != nil {
		return nil, err
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return v, err
	}
	rs, err := snap.Recipients(ctx)
	if err != nil {
		return v, err
	}
	found := CloneFound{Recipients: rs, Yours: make([]bool, len(rs))}
	readable := false
	for i, r := range rs {
		found.Yours[i] = slices.ContainsFunc(id.Recipients, func(m keys.Recipient) bool { return m.Key == r.Key })
		readable = readable || found.Yours[i]
	}
	if readable {
		if trust == nil {
			return v, nil
		}
		if found.Writers, found.HasWriters, err = v.Writers(ctx); err != nil {
			return v, err
		}
		return v, trust(found) // on an error v is closed and dir removed on the way out
	}
	return v, notRecipient(url, h, opts, id)
}

// notRecipient is the error of a clone of url, at h, that the identity id
// (at opts.IdentityFile) cannot read.
func notRecipient(url string, h gitlog.Hash, opts Options, id *keys.File) error {
	mine := "(unknown)"
	if len(id.Recipients) > 0 {
		mine = id.Recipients[0].Key
	}
	return fmt.Errorf("vault: clone %s at %s: your identity %s (recipient %s) cannot read it: %w",
		gitlog.Redact(url), h, opts.IdentityFile, mine, ErrNotRecipient)
}

// readableBy says whether id is one of the recipients the tree of commit h
// names, or true when that cannot be told (admission then says what is
// wrong with the tree). A sealed vault's names open only with its key, which
// only a recipient opens: asked before admission, the answer is "add this
// key", not a refusal of every name.
func readableBy(repo *gitlog.Repo, h gitlog.Hash, id *keys.File) bool {
	root, err := repo.RootTree(h)
	if err != nil {
		return true
	}
	e, err := repo.Lookup(root, recipientsPath)
	if err != nil || e.IsDir() {
		return true
	}
	if n, err := repo.ObjectSize(e.Hash); err != nil || n > 1<<20 {
		return true
	}
	content, err := repo.ReadBlob(e.Hash)
	if err != nil {
		return true
	}
	f, err := keys.ParseRecipientsFile(content)
	if err != nil {
		return true
	}
	for _, r := range id.Recipients {
		if f.Index(r.Key) >= 0 {
			return true
		}
	}
	return false
}

// cloneFetch fetches url's main branch into repo and points main at it.
func cloneFetch(ctx context.Context, repo *gitlog.Repo, url string, opts Options, id *keys.File, co CloneOptions) (gitlog.Hash, error) {
	defer repo.Close()
	if err := repo.AddRemote(DefaultRemote, url); err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	h, err := repo.Fetch(ctx, DefaultRemote, co.Auth.transfer(co.Progress))
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	if h.IsZero() {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone %s: the remote is empty: %w", gitlog.Redact(url), ErrNotVault)
	}
	if !readableBy(repo, h, id) {
		return gitlog.ZeroHash, notRecipient(url, h, opts, id)
	}
	refused, err := admitClone(ctx, repo, opts, h, co.ExpectWriters)
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	if len(refused) > 0 && !co.SkipRefused {
		return gitlog.ZeroHash, refusedError("clone "+gitlog.Redact(url), refused)
	}
	w, err := repo.Lock(ctx)
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	defer w.Unlock()
	if err := w.UpdateRef(gitlog.Branch, gitlog.ZeroHash, h); err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	return h, nil
}

// removeClone undoes a failed clone: the directory goes, or only what the clone
// put in it when it existed (empty) before.
func removeClone(dir string, existed bool) {
	if !existed {
		os.RemoveAll(dir)
		return
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		os.RemoveAll(dir + string(os.PathSeparator) + n.Name())
	}
}

// Remotes lists v's remotes, their URLs without passwords.
func (v *Vault) Remotes() ([]Remote, error) {
	rs, err := v.repo.Remotes()
	if err != nil {
		return nil, err
	}
	out := make([]Remote, len(rs))
	for i, r := range rs {
		out[i] = Remote{Name: r.Name, URL: gitlog.Redact(r.URL)}
	}
	return out, nil
}

// AddRemote records a remote of v; the error wraps ErrRemoteExists,
// ErrBadRemoteName or ErrBadRemoteURL (see checkRemoteURL).
func (v *Vault) AddRemote(name, url string) error {
	if err := checkRemoteURL(url); err != nil {
		return err
	}
	return v.repo.AddRemote(name, url)
}

// RemoveRemote forgets v's remote name; the error wraps ErrNoRemote.
func (v *Vault) RemoveRemote(name string) error { return v.repo.RemoveRemote(name) }
