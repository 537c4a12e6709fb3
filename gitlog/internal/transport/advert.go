package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
)

// Bounds on a server's ref advertisement, the list of refs it sends before
// anything else. go-git keeps every ref of it in memory, and a server that
// never ended its list took gigabytes within seconds, bounded only by the
// transfer's whole timeout. A vault has one branch and a few checkpoints:
// these bounds leave room for a repository of a hundred thousand refs.
const (
	maxAdvertisement = 16 << 20
	advertTimeout    = time.Minute
)

// advertTimeoutHook is advertTimeout, shortened by tests.
var advertTimeoutHook = advertTimeout

// webClient is go-git's smart-HTTP client with the bounds on the
// advertisement, shared by every http(s) transfer of the process.
var webClient = sync.OnceValue(func() gittransport.Transport {
	return githttp.NewClient(&http.Client{Transport: advertRoundTripper{http.DefaultTransport}})
})

// transportFor returns the transport a transfer with ep takes: over http(s)
// bounded on the size and the time of the advertisement (its response body),
// over git:// on both through a relay (see relayedGit), over ssh, whose
// connection go-git keeps to itself and encrypts, on its time and on the
// bytes the server sends before it ends (see countedSSH), and a local path
// served in process from repo (see localServer). It is chosen here, never through
// go-git's table of protocols (client.Protocols), which belongs to the whole
// process: a program that embeds memvault beside its own use of go-git keeps
// go-git's transports as they are.
func transportFor(ep *gittransport.Endpoint, repo Repo) (gittransport.Transport, error) {
	switch ep.Protocol {
	case "http", "https":
		return timedAdvert{webClient()}, nil
	case "git":
		return timedAdvert{relayedGit{gitproto.DefaultClient}}, nil
	case "ssh":
		return timedAdvert{countedSSH{gitssh.DefaultClient}}, nil
	case "file":
		return localServer{server.DefaultServer, repo}, nil
	}
	return nil, fmt.Errorf("unsupported scheme %q", ep.Protocol)
}

// advertRoundTripper bounds the body of a smart-HTTP ref advertisement
// (GET .../info/refs) in size and time.
type advertRoundTripper struct{ http.RoundTripper }

func (rt advertRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := rt.RoundTripper.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/info/refs") {
		return res, err
	}
	b := &advertBody{body: res.Body, left: maxAdvertisement}
	b.timer = time.AfterFunc(advertTimeoutHook, func() {
		b.mu.Lock()
		b.late = true
		b.mu.Unlock()
		res.Body.Close()
	})
	res.Body = b
	return res, nil
}

// advertBody is an advertisement's response body that fails once it has
// given maxAdvertisement bytes or advertTimeout has passed.
type advertBody struct {
	body  io.ReadCloser
	timer *time.Timer
	left  int64

	mu   sync.Mutex
	late bool
}

func (b *advertBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, advertTooLarge()
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	b.mu.Lock()
	late := b.late
	b.mu.Unlock()
	if late && err != nil {
		return n, advertTooSlow()
	}
	return n, err
}

func (b *advertBody) Close() error {
	b.timer.Stop()
	return b.body.Close()
}

// advertError says which bound an advertisement passed; it wraps the
// sentinel a transfer error is sorted by (and transferError names), without
// repeating its text.
type advertError struct {
	msg string
	err error
}

func (e *advertError) Error() string { return e.msg }
func (e *advertError) Unwrap() error { return e.err }

func advertTooLarge() error {
	return &advertError{fmt.Sprintf("the server's ref advertisement is over %d MiB", maxAdvertisement>>20), ErrTooLarge}
}

func advertTooSlow() error {
	return &advertError{fmt.Sprintf("the server's ref advertisement took over %v", advertTimeoutHook), context.DeadlineExceeded}
}

// timedAdvert bounds the time a session's advertisement may take.
type timedAdvert struct{ gittransport.Transport }

func (t timedAdvert) NewUploadPackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.UploadPackSession, error) {
	s, err := t.Transport.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return timedUpload{s}, nil
}

func (t timedAdvert) NewReceivePackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.ReceivePackSession, error) {
	s, err := t.Transport.NewReceivePackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return timedReceive{s}, nil
}

type timedUpload struct{ gittransport.UploadPackSession }

func (s timedUpload) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	return timedRefs(ctx, s.UploadPackSession.AdvertisedReferencesContext)
}

type timedReceive struct {
	gittransport.ReceivePackSession
}

func (s timedReceive) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	return timedRefs(ctx, s.ReceivePackSession.AdvertisedReferencesContext)
}

// timedRefs runs an advertisement's read within advertTimeout. (go-git keeps
// the advertisement it read: later calls, in the transfer itself, answer
// from it and read nothing.)
func timedRefs(ctx context.Context, read func(context.Context) (*packp.AdvRefs, error)) (*packp.AdvRefs, error) {
	actx, cancel := context.WithTimeout(ctx, advertTimeoutHook)
	defer cancel()
	ar, err := read(actx)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return nil, advertTooSlow()
	}
	return ar, err
}
