package gitlog

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
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage"
)

// Auth holds credentials for a transfer. The zero value means: none for http and
// git://, the SSH agent and ~/.ssh/known_hosts for ssh. gitlog reads no
// environment variable for them; the caller fills them in.
type Auth struct {
	Username string // the http basic-auth user
	Password string // http password or token; never shown in errors
	SSHUser  string // the ssh user; "" means the URL's, else "git"
	SSHKey   string // a private key file for ssh instead of the agent
	// SSHKeyPassphrase unlocks SSHKey when it is encrypted.
	SSHKeyPassphrase string
	KnownHosts       string // a known_hosts file; "" means the default files
}

// TransferOptions configure Fetch and Push.
type TransferOptions struct {
	Auth     Auth
	Progress io.Writer // objects and bytes sent or received, and the server's own progress; nil for none
}

// captureRefs is the repository's storage with ref writes held back, so go-git's
// fetch never moves a ref behind the journal's back, and with the fetched pack
// taken by a packSink: it is installed whole or not at all, before Fetch moves
// the remote's ref through the journal. (A commit stored without its tree would
// make the next fetch think it had everything.)
type captureRefs struct {
	storage.Storer
	r        *Repo
	refs     map[string]Hash
	progress io.Writer // where the received pack is metered; nil for nowhere
	// ctx is the fetch's: go-git closes the pack sink through io.Closer,
	// which takes none, and the indexing must stop with the fetch.
	ctx context.Context
}

func newCapture(ctx context.Context, r *Repo, progress io.Writer) *captureRefs {
	r.jobjs.refresh(r.journalPath()) // best effort: a miss only fetches again what is here
	return &captureRefs{Storer: r.st, r: r, refs: map[string]Hash{}, progress: progress, ctx: ctx}
}

func (s *captureRefs) SetReference(ref *plumbing.Reference) error {
	s.refs[string(ref.Name())] = fromGG(ref.Hash())
	return nil
}

func (s *captureRefs) CheckAndSetReference(ref, _ *plumbing.Reference) error {
	return s.SetReference(ref)
}

// EncodedObject, HasEncodedObject and EncodedObjectSize go through r's read
// lock: go-git's fetch reads local commits (to tell the server what it has), and
// its storage builds its pack index lazily, unsafe beside other readers.
//
// A miss is the usual answer to go-git asking whether the repository already
// has the commit the remote advertises, so it is not looked for again after
// reindexing every pack (Repo.object's way with a miss): that decoded the
// index of the whole history up to lookTries times per fetch, and made every
// round of a busy fleet cost the length of its history. A commit
// another process fetched a moment ago is then fetched again, which is harmless.
func (s *captureRefs) EncodedObject(t plumbing.ObjectType, gh plumbing.Hash) (plumbing.EncodedObject, error) {
	h := fromGG(gh)
	if err := s.HasEncodedObject(gh); errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, plumbing.ErrObjectNotFound
	}
	typ, data, err := s.r.readObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, plumbing.ErrObjectNotFound // unwrapped: go-git compares with ==
	}
	if err != nil {
		return nil, err
	}
	return memoryObject(rawObject{typ: typ, hash: h, data: data}), nil
}

// HasEncodedObject finds the objects of the journal too (read as the fetch
// began, see Fetch): the newest commits are there until the journal is flushed.
func (s *captureRefs) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := s.r.jobjs.get(fromGG(h)); ok {
		return nil
	}
	s.r.readMu.Lock()
	defer s.r.readMu.Unlock()
	return s.Storer.HasEncodedObject(h)
}

func (s *captureRefs) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := s.r.jobjs.get(fromGG(h)); ok {
		return int64(len(o.data)), nil
	}
	s.r.readMu.Lock()
	defer s.r.readMu.Unlock()
	return s.Storer.EncodedObjectSize(h)
}

// PackfileWriter makes go-git hand over the fetched pack as it comes.
func (s *captureRefs) PackfileWriter() (io.WriteCloser, error) {
	sink, err := s.r.newPackSink(s.ctx)
	if err == nil {
		sink.meter = newMeter(s.progress, "Receiving")
	}
	return sink, err
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
	installLocal()
	installBounded()
	auth, err := authMethod(rc.URLs[0], opts.Auth)
	if err != nil {
		return ZeroHash, err
	}
	defer closeAuth(auth)
	lines := newProgressLines(opts.Progress)
	defer lines.end()
	st := newCapture(ctx, r, lines.source())
	rem := git.NewRemote(st, rc)
	fo := &git.FetchOptions{RemoteName: name, RefSpecs: rc.Fetch, Auth: auth, Progress: lines.source(), Tags: git.NoTags}
	err = r.withCredentialHelper(ctx, rc.URLs[0], opts.Auth, &fo.Auth, func() error { return rem.FetchContext(ctx, fo) })
	old, rerr := r.Ref(RemoteRef(name))
	if rerr != nil {
		return ZeroHash, rerr
	}
	var noRef git.NoMatchingRefSpecError
	switch {
	case errors.Is(err, git.NoErrAlreadyUpToDate):
		return old, nil
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.As(err, &noRef):
		return ZeroHash, nil
	case err != nil:
		return ZeroHash, transferError("fetch", name, rc.URLs[0], sshError(err, auth), err)
	}
	h, ok := st.refs[RemoteRef(name)]
	if !ok || h == old {
		return old, nil
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
// ErrNoRemote, ErrUnreachable, ErrAuth or ErrTimeout; nothing local moves then.
func (r *Repo) Push(ctx context.Context, name string, h Hash, opts TransferOptions) error {
	rc, err := r.remote(name)
	if err != nil {
		return err
	}
	installLocal()
	installBounded()
	auth, err := authMethod(rc.URLs[0], opts.Auth)
	if err != nil {
		return err
	}
	defer closeAuth(auth)
	known, err := r.Ref(RemoteRef(name))
	if err != nil {
		return err
	}
	lines := newProgressLines(opts.Progress)
	err = r.withCredentialHelper(ctx, rc.URLs[0], opts.Auth, &auth, func() error { return r.send(ctx, rc.URLs[0], known, h, auth, lines) })
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
	cli, err := client.NewClient(ep)
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
		b := newPackEncoder(meteredWriter{pw, m}, len(objs))
		err := r.writeSent(ctx, b, objs)
		if err == nil {
			_, err = b.trailer()
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
	m.done()
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
		if base, err := r.MergeBase(theirs, h); err != nil || base != theirs {
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
func (r *Repo) writeSent(ctx context.Context, b *packBuilder, objs []Hash) error {
	reuse := openReuse(r.dir, objs)
	reuse.read = r.packs.read
	defer reuse.close()
	window, depth := r.deltaConfig()
	return b.write(ctx, objs, r.openObject, reuse, window, depth)
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
func authMethod(rawURL string, a Auth) (transport.AuthMethod, error) {
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
