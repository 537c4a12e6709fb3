package gitlog

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	git "github.com/go-git/go-git/v5"
	"github.com/memvault/memvault/gitlog/internal/pack"
	"github.com/memvault/memvault/gitlog/internal/transport"
)

// TransferOptions configure Fetch and Push: the credentials a transfer may
// present, and where its progress goes. The zero value means: no credentials
// for http and git://, the SSH agent and ~/.ssh/known_hosts for ssh, and no
// progress. gitlog reads no environment variable for them; the caller fills
// them in.
type TransferOptions struct {
	Username string // the http basic-auth user
	Password string // http password or token; never shown in errors
	SSHUser  string // the ssh user; "" means the URL's, else "git"
	SSHKey   string // a private key file for ssh instead of the agent
	// SSHKeyPassphrase unlocks SSHKey when it is encrypted.
	SSHKeyPassphrase string
	KnownHosts       string    // a known_hosts file; "" means the default files
	Progress         io.Writer // objects and bytes sent or received, and the server's own progress; nil for none
}

// Fetch fetches the main branch of remote name into RemoteRef(name), moving that
// ref through the journal under the lock, and returns what it now holds (ZeroHash
// for an empty remote). It takes the lock itself. The error wraps ErrNoRemote,
// ErrUnreachable, ErrAuth or ErrTimeout, ErrTooLarge (a ref advertisement over
// its bound), or, over ssh, ErrUnknownHost or ErrHostKeyChanged; the branch
// never moves.
func (r *Repo) Fetch(ctx context.Context, name string, opts TransferOptions) (Hash, error) {
	rc, err := r.remote(name)
	if err != nil {
		return ZeroHash, err
	}
	old, err := r.Ref(RemoteRef(name))
	if err != nil {
		return ZeroHash, err
	}
	h, err := transport.Fetch(ctx, transferRepo{r}, name, rc.URLs[0], old, transport.Options(opts))
	if err != nil || h == old || h.IsZero() {
		return h, err
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return ZeroHash, err
	}
	defer unlock()
	cur, err := r.Ref(RemoteRef(name))
	if err != nil {
		return ZeroHash, err
	}
	if err := r.casRef(RemoteRef(name), cur, h, nil); err != nil {
		return ZeroHash, err
	}
	return h, nil
}

// Push sends Branch at h to remote name's main branch, which must be where the
// last Fetch found it (or missing) and an ancestor of h, then records h in
// RemoteRef(name). Only what the remote lacks is sent: the commits since its
// branch and the trees and blobs they changed. The error wraps ErrRejected when
// the remote's branch moved meanwhile (fetch and merge, then push again), and
// ErrNoRemote, ErrUnreachable, ErrAuth or ErrTimeout (or, over ssh,
// ErrUnknownHost or ErrHostKeyChanged); nothing local moves then.
func (r *Repo) Push(ctx context.Context, name string, h Hash, opts TransferOptions) error {
	rc, err := r.remote(name)
	if err != nil {
		return err
	}
	known, err := r.Ref(RemoteRef(name))
	if err != nil {
		return err
	}
	if err := transport.Push(ctx, transferRepo{r}, name, rc.URLs[0], known, h, transport.Options(opts)); err != nil {
		return err
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := r.Ref(RemoteRef(name))
	if err != nil || cur == h {
		return err
	}
	return r.casRef(RemoteRef(name), cur, h, nil)
}

// transferRepo is what the transport needs of a Repo. It is a type of its
// own, not Repo's methods, so that they stay off gitlog's door.
type transferRepo struct{ r *Repo }

var _ transport.Repo = transferRepo{}

// Dir implements transport.Repo.
func (t transferRepo) Dir() string { return t.r.dir }

// ReadCommit implements transport.Repo.
func (t transferRepo) ReadCommit(h Hash) error {
	_, err := t.r.readCommit(h)
	return err
}

// ReceivePack implements transport.Repo: the pack goes into a pack sink,
// whole and synced, or not at all.
func (t transferRepo) ReceivePack(ctx context.Context, rd io.Reader, m pack.Meter) error {
	sink, err := t.r.newPackSink(ctx)
	if err != nil {
		return err
	}
	sink.SetMeter(m)
	if _, err := io.Copy(sink, rd); err != nil {
		sink.Abort()
		return err
	}
	return sink.Close()
}

// maxHaves bounds the commits of each local ref a fetch names to the server
// as held, as go-git's fetch does: enough to find the common history of two
// clones that each made a few commits, without listing a long history.
const maxHaves = 100

// Haves implements transport.Repo: up to maxHaves of the history of each of
// r's refs, the newest first, stopping at one the server advertised.
func (t transferRepo) Haves(theirs map[Hash]bool) []Hash {
	r := t.r
	seen := map[Hash]bool{}
	var out []Hash
	heads, _ := r.refsWithPrefix("refs/heads/")
	remotes, _ := r.refsWithPrefix("refs/remotes/")
	for _, h := range append(slices.Collect(maps.Values(heads)), slices.Collect(maps.Values(remotes))...) {
		if seen[h] {
			continue
		}
		n := 0
		r.walkAll(h, func(c *Commit) error {
			if seen[c.Hash] {
				return nil
			}
			seen[c.Hash] = true
			out = append(out, c.Hash)
			if n++; n >= maxHaves || theirs[c.Hash] {
				return ErrStop
			}
			return nil
		})
	}
	return out
}

// ToSend implements transport.Repo.
func (t transferRepo) ToSend(ctx context.Context, theirs, known, h Hash) ([]Hash, error) {
	return t.r.toSend(ctx, theirs, known, h)
}

// WritePack implements transport.Repo: objects are copied from r's packs
// where they are stored, the rest read and compressed.
func (t transferRepo) WritePack(ctx context.Context, w io.Writer, objs []Hash) error {
	b := pack.NewEncoder(w, len(objs))
	if err := t.r.writeSent(ctx, b, objs); err != nil {
		return err
	}
	_, err := b.Trailer()
	return err
}

// PushLocal implements transport.Repo (see sendLocal).
func (t transferRepo) PushLocal(ctx context.Context, dir string, known, h Hash, m pack.Meter) error {
	return t.r.sendLocal(ctx, dir, known, h, m)
}

// ServeLocal implements transport.Repo (see servedRepo).
func (t transferRepo) ServeLocal(dir string) (transport.Served, error) {
	return openServed(dir)
}

// toSend returns the objects a push of h to a remote whose main is theirs
// sends. The push must be a fast-forward from known, the remote's main when
// this repository last read it.
func (r *Repo) toSend(ctx context.Context, theirs, known, h Hash) ([]Hash, error) {
	switch {
	case theirs != known:
		// ErrForceNeeded reads as ErrRejected in the transport's errors.
		return nil, fmt.Errorf("the remote's main moved to %s since the last fetch (fetch first): %w", theirs, git.ErrForceNeeded)
	case !theirs.IsZero():
		if base, err := r.MergeBase(ctx, theirs, h); err != nil || base != theirs {
			return nil, fmt.Errorf("non-fast-forward: %s does not descend from the remote's main %s: %w", h, theirs, git.ErrForceNeeded)
		}
	}
	var haves []Hash
	if !theirs.IsZero() {
		haves = []Hash{theirs}
	}
	return missingObjects(ctx, repoSource{r}, []Hash{h}, haves)
}

// writeSent writes the objects of a push, objs, to the pack b started for
// them: copied from this repository's packs where they are stored, the rest
// read and compressed, trees compared for deltas as the config says.
func (r *Repo) writeSent(ctx context.Context, b *pack.Builder, objs []Hash) error {
	reuse := pack.OpenReuse(r.dir, objs)
	reuse.Cached = r.packs.Read
	defer reuse.Close()
	window, depth := r.deltaConfig()
	return b.Send(ctx, objs, r.openObject, reuse, window, depth)
}
