// Package transport moves the main branch between a repository and its
// remotes: it speaks git's protocols (upload-pack to fetch, receive-pack to
// push) over a local path, git://, ssh and smart HTTP, finds the credentials
// a remote asks for, and reports progress.
//
// What it promises: nothing the remote sends reaches the repository but a
// whole pack (Repo.ReceivePack takes it or nothing); a ref advertisement is
// bounded in size and time whatever the transport; a push only ever
// fast-forwards the remote's branch from where the last fetch found it; no
// password appears in an error; and no global state of the git library is
// changed, so a program that uses it beside memvault keeps it as it is.
// Every error of a transfer wraps one of the sentinels below (or
// context.Canceled), which gitlog re-exports; as gitlog's errors to its
// callers, they begin "gitlog:".
//
// What it needs of the repository is the interface Repo; it moves no ref of
// its own, and a push into a path on this machine is the repository's own
// write (Repo.PushLocal).
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/memvault/memvault/gitlog/internal/object"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// Hash is a git object name, the engine's own.
type Hash = object.Hash

// The errors a transfer's error wraps, re-exported by gitlog (as
// gitlog.ErrAuth and so on), whose documentation says more.
var (
	// ErrUnreachable: the remote's host or repository could not be reached.
	ErrUnreachable = errors.New("remote unreachable")
	// ErrAuth: the remote refused the credentials, or asked for some.
	ErrAuth = errors.New("remote refused authentication")
	// ErrUnknownHost: the ssh host is in no known_hosts file.
	ErrUnknownHost = errors.New("unknown ssh host")
	// ErrHostKeyChanged: the ssh host answered with another key than the
	// one known_hosts records for it.
	ErrHostKeyChanged = errors.New("the ssh host key changed")
	// ErrTimeout: the transfer, or its ref advertisement, ran out of time.
	ErrTimeout = errors.New("timed out")
	// ErrRejected: the remote refused the push, its branch having moved.
	ErrRejected = errors.New("push rejected: the remote branch moved")
	// ErrTooLarge: a ref advertisement passed its bound; it is the engine's
	// sentinel for any read over its limit.
	ErrTooLarge = object.ErrTooLarge
)

// mainBranch is the branch a transfer moves, on both sides (gitlog.Branch).
const mainBranch = plumbing.ReferenceName("refs/heads/main")

// Options configure a transfer: the credentials it may present and where its
// progress goes. They are gitlog.TransferOptions, field for field.
type Options struct {
	Username         string
	Password         string
	SSHUser          string
	SSHKey           string
	SSHKeyPassphrase string
	KnownHosts       string
	Progress         io.Writer
}

// Source writes objects of a repository as a pack.
type Source interface {
	// WritePack writes objs, each once, as one whole pack (header, objects,
	// trailer) to w.
	WritePack(ctx context.Context, w io.Writer, objs []Hash) error
}

// Served is a repository on this machine that a fetch from its path reads,
// served in process.
type Served interface {
	Source
	// Missing lists what a repository holding everything reachable from
	// haves lacks to hold everything reachable from wants; a have it does not
	// hold is ignored.
	Missing(ctx context.Context, wants, haves []Hash) ([]Hash, error)
	// Close lets go of what the repository held open for the fetch.
	Close() error
}

// Repo is what a transfer needs of the repository on this side.
type Repo interface {
	Source
	// Dir is the repository's folder, whose config git's credential helpers
	// read.
	Dir() string
	// ReadCommit returns nil when the repository holds commit h, else why
	// not. A pack goes in whole, so a commit held comes with all it needs.
	ReadCommit(h Hash) error
	// Haves lists commits the repository holds, newest first, for a fetch to
	// name to the server; the walk of each ref's history stops at a commit
	// in theirs, what the server advertised.
	Haves(theirs map[Hash]bool) []Hash
	// ReceivePack takes the pack read from rd into the repository, whole and
	// synced, or nothing of it; m counts its bytes.
	ReceivePack(ctx context.Context, rd io.Reader, m pack.Meter) error
	// ToSend lists the objects a push of h sends to a remote whose main is
	// theirs. The push must be a fast-forward from known, the remote's main
	// when the repository last read it; the error of one that is not wraps
	// go-git's ErrForceNeeded, which the push reports as ErrRejected.
	ToSend(ctx context.Context, theirs, known, h Hash) ([]Hash, error)
	// PushLocal pushes h into the repository at dir, on this machine, as a
	// write of the repository's own, whose main must still be known; m counts
	// the pack's bytes. Its errors are sorted as any push's.
	PushLocal(ctx context.Context, dir string, known, h Hash, m pack.Meter) error
	// ServeLocal opens the repository at dir for a fetch from its path.
	ServeLocal(dir string) (Served, error)
}

// Fetch fetches the main branch of the repository at rawURL, the remote
// name, into repo and returns what it holds (the zero Hash for an empty
// remote or one without a main branch). known is what repo last fetched from
// it. The error wraps ErrUnreachable, ErrAuth, ErrUnknownHost,
// ErrHostKeyChanged, ErrTimeout, ErrTooLarge or context.Canceled, and names
// the remote by its URL without credentials.
func Fetch(ctx context.Context, repo Repo, name, rawURL string, known Hash, opts Options) (Hash, error) {
	auth, err := authMethod(rawURL, opts)
	if err != nil {
		return Hash{}, err
	}
	defer closeAuth(auth)
	lines := newProgressLines(opts.Progress)
	defer lines.end()
	var h Hash
	err = withCredentialHelper(ctx, repo.Dir(), rawURL, opts, &auth, func() (err error) {
		h, err = receive(ctx, repo, rawURL, known, auth, lines)
		return err
	})
	switch {
	case errors.Is(err, gittransport.ErrEmptyRemoteRepository):
		return Hash{}, nil
	case err != nil:
		return Hash{}, transferError("fetch", name, rawURL, sshError(err, auth), err)
	}
	return h, nil
}

// Push sends h from repo to the main branch of the repository at rawURL, the
// remote name, which must be at known (or missing, known zero) and an
// ancestor of h. Only what the remote lacks is sent. The error wraps
// ErrRejected when the remote's branch moved, and otherwise as Fetch's does.
func Push(ctx context.Context, repo Repo, name, rawURL string, known, h Hash, opts Options) error {
	auth, err := authMethod(rawURL, opts)
	if err != nil {
		return err
	}
	defer closeAuth(auth)
	lines := newProgressLines(opts.Progress)
	err = withCredentialHelper(ctx, repo.Dir(), rawURL, opts, &auth, func() error { return send(ctx, repo, rawURL, known, h, auth, lines) })
	lines.end()
	if err != nil {
		return transferError("push", name, rawURL, sshError(err, auth), err)
	}
	return nil
}

// receive fetches the main branch of the repository at rawURL over
// upload-pack and returns what it holds (zero: no main branch): the pack of
// what repo lacks goes in whole, or not at all. known is what the remote's
// ref in repo holds.
func receive(ctx context.Context, repo Repo, rawURL string, known Hash, auth gittransport.AuthMethod, lines *progressLines) (h Hash, err error) {
	ep, err := gittransport.NewEndpoint(rawURL)
	if err != nil {
		return Hash{}, err
	}
	cli, err := transportFor(ep, repo)
	if err != nil {
		return Hash{}, err
	}
	sess, err := cli.NewUploadPackSession(ep, auth)
	if err != nil {
		return Hash{}, err
	}
	defer func() {
		if cerr := sess.Close(); err == nil {
			err = cerr
		}
	}()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return Hash{}, err
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return Hash{}, err
	}
	main, err := refs.Reference(mainBranch)
	if err != nil || main.Type() != plumbing.HashReference {
		return Hash{}, nil // no main branch: nothing to fetch
	}
	h = Hash(main.Hash())
	if h == known {
		return h, nil
	}
	if repo.ReadCommit(h) == nil {
		return h, nil // held already: packs go in whole, with all they need
	}
	theirs := map[Hash]bool{}
	if iter, err := refs.IterReferences(); err == nil {
		iter.ForEach(func(ref *plumbing.Reference) error {
			theirs[Hash(ref.Hash())] = true
			return nil
		})
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	if lines == nil && ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	req.Wants = []plumbing.Hash{main.Hash()}
	req.Haves = object.ToGoGit(repo.Haves(theirs))
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return Hash{}, err
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
	if err := repo.ReceivePack(ctx, rd, newMeter(lines.source(), "Receiving")); err != nil {
		return Hash{}, err
	}
	if err := repo.ReadCommit(h); err != nil {
		return Hash{}, fmt.Errorf("the server sent no commit %s: %w", h, err)
	}
	return h, nil
}

// send moves the main branch of the repository at rawURL from known to h over
// receive-pack, with a pack of what the remote lacks; a local path takes it as
// a write of repo's own (Repo.PushLocal).
func send(ctx context.Context, repo Repo, rawURL string, known, h Hash, auth gittransport.AuthMethod, lines *progressLines) (err error) {
	ep, err := gittransport.NewEndpoint(rawURL)
	if err != nil {
		return err
	}
	if ep.Protocol == "file" {
		return repo.PushLocal(ctx, ep.Path, known, h, newMeter(lines.source(), "Sending"))
	}
	cli, err := transportFor(ep, repo)
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
	if ref, err := refs.Reference(mainBranch); err == nil {
		theirs = Hash(ref.Hash())
	}
	if theirs == h {
		return nil
	}
	objs, err := repo.ToSend(ctx, theirs, known, h)
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
	req.Commands = []*packp.Command{{Name: mainBranch, Old: plumbing.Hash(theirs), New: plumbing.Hash(h)}}
	pr, pw := io.Pipe()
	req.Packfile = pr
	encoded := make(chan error, 1)
	m := newMeter(lines.source(), "Sending")
	go func() {
		err := repo.WritePack(ctx, meteredWriter{pw, m}, objs)
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
	case errors.Is(err, gittransport.ErrAuthenticationRequired), errors.Is(err, gittransport.ErrAuthorizationFailed),
		errors.Is(err, gittransport.ErrInvalidAuthMethod), strings.Contains(msg, "unable to authenticate"),
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
func authMethod(rawURL string, a Options) (gittransport.AuthMethod, error) {
	ep, err := gittransport.NewEndpoint(rawURL)
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

// Redact removes any password or token from a URL, for messages.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return redactUnparsed(rawURL)
	}
	if u.User == nil {
		return rawURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// redactUnparsed hides a password in a URL that does not parse (a password
// holding '/' or '#' cuts the authority short, so "https://alice:Tok3n/ABC@host"
// reads as a host with a bad port): whatever lies between the first ':' after
// "://" and the last '@' of the rest is replaced.
func redactUnparsed(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	at := strings.LastIndex(rest, "@")
	colon := strings.Index(rest, ":")
	if at < 0 || colon < 0 || colon > at {
		return raw
	}
	start := len(raw) - len(rest)
	return raw[:start+colon+1] + "xxxxx" + raw[start+at:]
}
