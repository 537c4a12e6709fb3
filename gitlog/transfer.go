package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/memvault/memvault/gitlog/internal/pack"
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
// ErrUnreachable, ErrAuth, ErrTimeout or ErrTooLarge (a ref advertisement
// over its bound); the branch never moves.
func (r *Repo) Fetch(ctx context.Context, name string, opts TransferOptions) (Hash, error) {
	rc, err := r.remote(name)
	if err != nil {
		return ZeroHash, err
	}
	auth, err := authMethod(rc.URLs[0], opts)
	if err != nil {
		return ZeroHash, err
	}
	defer closeAuth(auth)
	old, err := r.Ref(RemoteRef(name))
	if err != nil {
		return ZeroHash, err
	}
	lines := newProgressLines(opts.Progress)
	defer lines.end()
	var h Hash
	err = r.withCredentialHelper(ctx, rc.URLs[0], opts, &auth, func() (err error) {
		h, err = r.receive(ctx, rc.URLs[0], old, auth, lines)
		return err
	})
	switch {
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return ZeroHash, nil
	case err != nil:
		return ZeroHash, transferError("fetch", name, rc.URLs[0], sshError(err, auth), err)
	case h == old || h.IsZero():
		return h, nil
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

// maxHaves bounds the commits of each local ref a fetch names to the server
// as held, as go-git's fetch does: enough to find the common history of two
// clones that each made a few commits, without listing a long history.
const maxHaves = 100

// receive fetches the main branch of the repository at rawURL over
// upload-pack and returns what it holds (ZeroHash: no main branch): the pack
// of what this repository lacks goes into a pack sink, whole and synced, or
// not at all. known is what the remote's ref here holds.
func (r *Repo) receive(ctx context.Context, rawURL string, known Hash, auth transport.AuthMethod, lines *progressLines) (h Hash, err error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return ZeroHash, err
	}
	cli, err := transportFor(ep)
	if err != nil {
		return ZeroHash, err
	}
	sess, err := cli.NewUploadPackSession(ep, auth)
	if err != nil {
		return ZeroHash, err
	}
	defer func() {
		if cerr := sess.Close(); err == nil {
			err = cerr
		}
	}()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return ZeroHash, err
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return ZeroHash, err
	}
	main, err := refs.Reference(ref(Branch))
	if err != nil || main.Type() != plumbing.HashReference {
		return ZeroHash, nil // no main branch: nothing to fetch
	}
	h = fromGG(main.Hash())
	if h == known {
		return h, nil
	}
	if _, err := r.readCommit(h); err == nil {
		return h, nil // held already: packs go in whole, with all they need
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	if lines == nil && ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	req.Wants = []plumbing.Hash{main.Hash()}
	req.Haves = ggHashes(r.haves(refs))
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return ZeroHash, err
	}
	defer resp.Close()
	var rd io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		d := sideband.NewDemuxer(sideband.Sideband64k, resp)
		d.Progress = lines.source()
		rd = d
	case req.Capabilities.Supports(capability.Sideband):
		d := sideband.NewDemuxer(sideband.Sideband, resp)
		d.Progress = lines.source()
		rd = d
	}
	sink, err := r.newPackSink(ctx)
	if err != nil {
		return ZeroHash, err
	}
	sink.SetMeter(newMeter(lines.source(), "Receiving"))
	if _, err := io.Copy(sink, rd); err != nil {
		sink.Abort()
		return ZeroHash, err
	}
	if err := sink.Close(); err != nil {
		return ZeroHash, err
	}
	if _, err := r.readCommit(h); err != nil {
		return ZeroHash, fmt.Errorf("the server sent no commit %s: %w", h, err)
	}
	return h, nil
}

// haves lists commits this repository holds for a fetch to name to the
// server: up to maxHaves of the history of each of its refs, the newest
// first, stopping at one the server advertised.
func (r *Repo) haves(remote storer.ReferenceStorer) []Hash {
	theirs := map[Hash]bool{}
	if iter, err := remote.IterReferences(); err == nil {
		iter.ForEach(func(ref *plumbing.Reference) error {
			theirs[fromGG(ref.Hash())] = true
			return nil
		})
	}
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

// Push sends Branch at h to remote name's main branch, which must be where the
// last Fetch found it (or missing) and an ancestor of h, then records h in
// RemoteRef(name). Only what the remote lacks is sent: the commits since its
// branch and the trees and blobs they changed. The error wraps ErrRejected when
// the remote's branch moved meanwhile (fetch and merge, then push again), and
// ErrNoRemote, ErrUnreachable, ErrAuth or ErrTimeout; nothing local moves then.
func (r *Repo) Push(ctx context.Context, name string, h Hash, opts TransferOptions) error {
	rc, err := r.remote(name)
	if err != nil {
		return err
	}
	auth, err := authMethod(rc.URLs[0], opts)
	if err != nil {
		return err
	}
	defer closeAuth(auth)
	known, err := r.Ref(RemoteRef(name))
	if err != nil {
		return err
	}
	lines := newProgressLines(opts.Progress)
	err = r.withCredentialHelper(ctx, rc.URLs[0], opts, &auth, func() error { return r.send(ctx, rc.URLs[0], known, h, auth, lines) })
	lines.end()
	if err != nil {
		return transferError("push", name, rc.URLs[0], sshError(err, auth), err)
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

// send moves the main branch of the repository at rawURL from known to h over
// receive-pack, with a pack of what the remote lacks; a local path takes it as
// a write of its own (sendLocal).
func (r *Repo) send(ctx context.Context, rawURL string, known, h Hash, auth transport.AuthMethod, lines *progressLines) (err error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return err
	}
	if ep.Protocol == "file" {
		return r.sendLocal(ctx, ep.Path, known, h, lines)
	}
	cli, err := transportFor(ep)
	if err != nil {
		return err
	}
	sess, err := cli.NewReceivePackSession(ep, auth)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := sess.Close(); err == nil {
			err = cerr
		}
	}()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return err
	}
	var theirs Hash
	if ref, err := refs.Reference(ref(Branch)); err == nil {
		theirs = fromGG(ref.Hash())
	}
	if theirs == h {
		return nil
	}
	objs, err := r.toSend(ctx, theirs, known, h)
	if err != nil {
		return err
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	if lines != nil {
		req.Progress = lines.source()
		if ar.Capabilities.Supports(capability.Sideband64k) {
			_ = req.Capabilities.Set(capability.Sideband64k)
		} else if ar.Capabilities.Supports(capability.Sideband) {
			_ = req.Capabilities.Set(capability.Sideband)
		}
	}
	req.Commands = []*packp.Command{{Name: ref(Branch), Old: gg(theirs), New: gg(h)}}
	pr, pw := io.Pipe()
	req.Packfile = pr
	encoded := make(chan error, 1)
	m := newMeter(lines.source(), "Sending")
	go func() {
		b := pack.NewEncoder(meteredWriter{pw, m}, len(objs))
		err := r.writeSent(ctx, b, objs)
		if err == nil {
			_, err = b.Trailer()
		}
		pw.CloseWithError(err)
		encoded <- err
	}()
	rs, err := sess.ReceivePack(ctx, req)
	pr.Close() // unblocks the encoder if the server stopped reading
	if eerr := <-encoded; err == nil && eerr != nil && !errors.Is(eerr, io.ErrClosedPipe) {
		err = eerr
	}
	if err != nil {
		return err
	}
	m.Done()
	if rs != nil {
		return rs.Error()
	}
	return nil
}

// toSend returns the objects a push of h to a remote whose main is theirs
// sends. The push must be a fast-forward from known, the remote's main when
// this repository last read it.
func (r *Repo) toSend(ctx context.Context, theirs, known, h Hash) ([]Hash, error) {
	switch {
	case theirs != known:
		// ErrForceNeeded reads as ErrRejected in transferError.
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

// transferError wraps a go-git error in the sentinel that says what happened,
// naming the remote by its URL without credentials. sshErr, when not nil, is
// what sshError made of err: the message and sentinel of an ssh failure.
func transferError(op, name, rawURL string, sshErr, err error) error {
	if sshErr != nil {
		return fmt.Errorf("gitlog: %s %s (%s): %w", op, name, Redact(rawURL), sshErr)
	}
	var sentinel error
	var nerr net.Error
	msg := err.Error()
	switch {
	case errors.Is(err, ErrTooLarge):
		sentinel = ErrTooLarge
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		sentinel = ErrTimeout
	case errors.Is(err, context.Canceled):
		sentinel = context.Canceled
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrInvalidAuthMethod), strings.Contains(msg, "unable to authenticate"),
		strings.Contains(msg, "knownhosts"):
		sentinel = ErrAuth
	case errors.Is(err, git.ErrForceNeeded), strings.Contains(msg, "non-fast-forward"),
		// The server's own compare-and-swap of the branch refused it: git
		// receive-pack's statuses, recent and older.
		strings.Contains(msg, "fetch first"), strings.Contains(msg, "failed to update ref"),
		strings.Contains(msg, "failed to lock"), strings.Contains(msg, "cannot lock ref"):
		sentinel = ErrRejected
	default:
		sentinel = ErrUnreachable
	}
	// go-git's messages can quote the URL; take credentials out of them.
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return fmt.Errorf("gitlog: %s %s (%s): %s: %w", op, name, Redact(rawURL), msg, sentinel)
}

// authMethod builds go-git's auth for the URL's transport from a, falling back
// for http(s) to a user and password written in the URL itself.
func authMethod(rawURL string, a TransferOptions) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, fmt.Errorf("gitlog: remote URL %s: %w", Redact(rawURL), err)
	}
	switch ep.Protocol {
	case "http", "https":
		user, pass := a.Username, a.Password
		if pass == "" && ep.Password != "" {
			user, pass = ep.User, ep.Password
		}
		if pass == "" {
			return nil, nil
		}
		if user == "" {
			user = "x-access-token" // what GitHub and Gitea accept with a token
		}
		return &githttp.BasicAuth{Username: user, Password: pass}, nil
	case "ssh":
		user := a.SSHUser
		if user == "" {
			user = ep.User
		}
		if user == "" {
			user = "git"
		}
		s, err := newSSHAuth(ep, user, a)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, nil
}
