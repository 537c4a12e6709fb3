package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// Clone creates a vault at dir (which must not exist or be empty) from the vault
// at url, recorded as remote DefaultRemote, and opens it. The identity at
// opts.IdentityFile must be one of the vault's recipients. On any error dir is
// removed again. The error wraps ErrNotRecipient (the message names the
// identity's recipient, for a current recipient to add), ErrNoIdentity,
// ErrNotVault when the remote holds no vault, ErrUnreachable or ErrAuth from the
// transfer, and ErrTimeout when ctx's deadline passed, whatever step it stopped.
func Clone(ctx context.Context, url, dir string, opts Options, auth Credentials, progress io.Writer) (v *Vault, err error) {
	return clone(ctx, url, dir, opts, auth, progress, false)
}

// CloneSkipRefused is Clone for a remote whose history holds entries memvault
// does not admit, where Clone fails with ErrRefused: the clone's main branch
// gets one more commit on the remote's, whose tree leaves those entries out
// and names each (see Vault.LeaveOutRefused). It returns the entries left out.
func CloneSkipRefused(ctx context.Context, url, dir string, opts Options, auth Credentials, progress io.Writer) (*Vault, []Refusal, error) {
	v, err := clone(ctx, url, dir, opts, auth, progress, true)
	if err != nil {
		return nil, nil, err
	}
	rs, err := v.LeaveOutRefused(ctx)
	if err != nil {
		v.Close()
		removeClone(dir, false)
		return nil, nil, err
	}
	return v, rs, nil
}

func clone(ctx context.Context, url, dir string, opts Options, auth Credentials, progress io.Writer, skip bool) (v *Vault, err error) {
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
	defer func() {
		if err != nil {
			if v != nil {
				v.Close()
				v = nil
			}
			removeClone(dir, existed)
		}
	}()
	h, err := cloneFetch(ctx, repo, url, auth, progress, skip)
	if err != nil {
		return nil, err
	}
	if v, err = Open(ctx, dir, opts); err != nil {
		return nil, err
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := snap.Recipients(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		for _, mine := range id.Recipients {
			if r.Key == mine.Key {
				return v, nil
			}
		}
	}
	mine := "(unknown)"
	if len(id.Recipients) > 0 {
		mine = id.Recipients[0].Key
	}
	return nil, fmt.Errorf("vault: clone %s at %s: your identity %s (recipient %s) cannot read it: %w",
		gitlog.Redact(url), h, opts.IdentityFile, mine, ErrNotRecipient)
}

// cloneFetch fetches url's main branch into repo and points main at it.
func cloneFetch(ctx context.Context, repo *gitlog.Repo, url string, auth Credentials, progress io.Writer, skip bool) (gitlog.Hash, error) {
	defer repo.Close()
	if err := repo.AddRemote(DefaultRemote, url); err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	h, err := repo.Fetch(ctx, DefaultRemote, gitlog.TransferOptions{Auth: auth.auth(), Progress: progress})
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	if h.IsZero() {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone %s: the remote is empty: %w", gitlog.Redact(url), ErrNotVault)
	}
	limits := readLimits(repo)
	repo.SetBlobLimit(blobLimit(limits))
	refused, err := admit(ctx, repo, limits, gitlog.ZeroHash, h)
	if err != nil {
		return gitlog.ZeroHash, fmt.Errorf("vault: clone: %w", err)
	}
	if len(refused) > 0 && !skip {
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

// Remotes lists the vault's remotes, their URLs without passwords.
func (v *Vault) Remotes() ([]remote, error) {
	rs, err := v.repo.Remotes()
	if err != nil {
		return nil, err
	}
	out := make([]remote, len(rs))
	for i, r := range rs {
		out[i] = remote{Name: r.Name, URL: gitlog.Redact(r.URL)}
	}
	return out, nil
}

// AddRemote records a remote; the error wraps ErrRemoteExists,
// ErrBadRemoteName or ErrBadRemoteURL (see checkRemoteURL).
func (v *Vault) AddRemote(name, url string) error {
	if err := checkRemoteURL(url); err != nil {
		return err
	}
	return v.repo.AddRemote(name, url)
}

// RemoveRemote forgets a remote; the error wraps ErrNoRemote.
func (v *Vault) RemoveRemote(name string) error { return v.repo.RemoveRemote(name) }
