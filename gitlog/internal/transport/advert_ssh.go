package transport

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/net/proxy"
)

// go-git keeps ssh's connection, and the channel the advertisement comes
// through, to itself, and its bytes are encrypted on the wire, so no relay
// can read their pkt-lines as git://'s does. What can be bounded is every
// byte the server sends until the advertisement has been read: go-git's one
// hook on the connection is a proxy dialer, so the ssh transport is given an
// endpoint whose proxy is a dialer of ours (registered under
// sshCountScheme), which dials as go-git would and counts what the server
// sends. The handshake takes a few kilobytes, and each byte of the
// advertisement arrives as at least one byte on the wire: past
// maxAdvertisement plus sshHandshakeRoom, the connection is cut.

const (
	sshCountScheme   = "memvault-advert-count"
	sshHandshakeRoom = 1 << 20
)

// sshCounters holds the counter of each ssh connection being dialed, by the
// id its endpoint's proxy URL names.
var (
	sshCounters sync.Map // string -> *advertCounter
	sshNextID   atomic.Uint64
	sshRegister sync.Once
)

// advertCounter counts the bytes a server sends until its advertisement has
// been read.
type advertCounter struct {
	left     atomic.Int64
	done     atomic.Bool
	tooLarge atomic.Bool
}

func newAdvertCounter(limit int64) *advertCounter {
	c := &advertCounter{}
	c.left.Store(limit)
	return c
}

// countedConn is a connection whose reads are counted against c.
type countedConn struct {
	net.Conn
	c *advertCounter
}

func (cc countedConn) Read(p []byte) (int, error) {
	if cc.c.done.Load() {
		return cc.Conn.Read(p)
	}
	if cc.c.left.Load() <= 0 {
		cc.c.tooLarge.Store(true)
		cc.Conn.Close()
		return 0, advertTooLarge()
	}
	n, err := cc.Conn.Read(p)
	if !cc.c.done.Load() {
		cc.c.left.Add(-int64(n))
	}
	return n, err
}

// countDialer dials as go-git's ssh transport does without a proxy, counting
// what the server sends.
type countDialer struct{ c *advertCounter }

func (d countDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d countDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := proxy.Dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return countedConn{conn, d.c}, nil
}

// countedSSH is go-git's ssh transport with the bytes before the end of the
// advertisement counted.
type countedSSH struct{ gittransport.Transport }

// counted returns the endpoint to give go-git instead of ep, and the counter
// its connection will count with; release forgets the counter once dialed. An
// endpoint that names a proxy of its own is left as it is.
func counted(ep *gittransport.Endpoint) (rep *gittransport.Endpoint, c *advertCounter, release func()) {
	c = newAdvertCounter(maxAdvertisement + sshHandshakeRoom)
	if ep.Proxy.URL != "" {
		return ep, c, func() {}
	}
	sshRegister.Do(func() {
		proxy.RegisterDialerType(sshCountScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
			v, ok := sshCounters.Load(u.Host)
			if !ok {
				return nil, errors.New("gitlog: ssh: a connection counted by nobody")
			}
			return countDialer{v.(*advertCounter)}, nil
		})
	})
	id := strconv.FormatUint(sshNextID.Add(1), 10)
	sshCounters.Store(id, c)
	e := *ep
	e.Proxy = gittransport.ProxyOptions{URL: sshCountScheme + "://" + id}
	return &e, c, func() { sshCounters.Delete(id) }
}

func (t countedSSH) NewUploadPackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.UploadPackSession, error) {
	rep, c, release := counted(ep)
	defer release()
	s, err := t.Transport.NewUploadPackSession(rep, auth)
	if err != nil {
		return nil, c.explain(err)
	}
	return countedUpload{s, c}, nil
}

func (t countedSSH) NewReceivePackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.ReceivePackSession, error) {
	rep, c, release := counted(ep)
	defer release()
	s, err := t.Transport.NewReceivePackSession(rep, auth)
	if err != nil {
		return nil, c.explain(err)
	}
	return countedReceive{s, c}, nil
}

type countedUpload struct {
	gittransport.UploadPackSession
	c *advertCounter
}

func (s countedUpload) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	ar, err := s.UploadPackSession.AdvertisedReferencesContext(ctx)
	s.c.done.Store(true)
	return ar, s.c.explain(err)
}

type countedReceive struct {
	gittransport.ReceivePackSession
	c *advertCounter
}

func (s countedReceive) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	ar, err := s.ReceivePackSession.AdvertisedReferencesContext(ctx)
	s.c.done.Store(true)
	return ar, s.c.explain(err)
}

// explain turns the error of an advertisement cut for its size into one that
// says so.
func (c *advertCounter) explain(err error) error {
	if err != nil && c.tooLarge.Load() {
		return advertTooLarge()
	}
	return err
}

// UploadPack ends the count: what comes after the advertisement is the pack,
// bounded by the transfer's own limits.
func (s countedUpload) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	s.c.done.Store(true)
	return s.UploadPackSession.UploadPack(ctx, req)
}

// ReceivePack ends the count, as UploadPack does.
func (s countedReceive) ReceivePack(ctx context.Context, req *packp.ReferenceUpdateRequest) (*packp.ReportStatus, error) {
	s.c.done.Store(true)
	return s.ReceivePackSession.ReceivePack(ctx, req)
}
