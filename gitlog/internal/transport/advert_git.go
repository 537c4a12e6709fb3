package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
)

// go-git keeps git://'s connection to itself, so its advertisement's size is
// bounded by a relay on loopback between go-git and the server: the relay
// reads the advertisement's pkt-lines as they pass and cuts the connection
// once they pass maxAdvertisement; after the advertisement's flush it copies
// bytes as they are.

// relayedGit is go-git's git:// transport through an advertisement relay.
type relayedGit struct{ gittransport.Transport }

func (t relayedGit) NewUploadPackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.UploadPackSession, error) {
	rel, rep, err := startRelay(ep)
	if err != nil {
		return nil, err
	}
	s, err := t.Transport.NewUploadPackSession(rep, auth)
	if err != nil {
		rel.close()
		return nil, err
	}
	return relayedUpload{s, rel}, nil
}

func (t relayedGit) NewReceivePackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.ReceivePackSession, error) {
	rel, rep, err := startRelay(ep)
	if err != nil {
		return nil, err
	}
	s, err := t.Transport.NewReceivePackSession(rep, auth)
	if err != nil {
		rel.close()
		return nil, err
	}
	return relayedReceive{s, rel}, nil
}

type relayedUpload struct {
	gittransport.UploadPackSession
	rel *relay
}

func (s relayedUpload) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	ar, err := s.UploadPackSession.AdvertisedReferencesContext(ctx)
	return ar, s.rel.explain(err)
}

func (s relayedUpload) Close() error {
	err := s.UploadPackSession.Close()
	s.rel.close()
	return err
}

type relayedReceive struct {
	gittransport.ReceivePackSession
	rel *relay
}

func (s relayedReceive) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	ar, err := s.ReceivePackSession.AdvertisedReferencesContext(ctx)
	return ar, s.rel.explain(err)
}

func (s relayedReceive) Close() error {
	err := s.ReceivePackSession.Close()
	s.rel.close()
	return err
}

// relay is one git:// connection relayed through loopback.
type relay struct {
	ln       net.Listener
	up       net.Conn
	host     string // what go-git would have sent as host= for the real endpoint
	tooLarge atomic.Bool

	mu     sync.Mutex
	client net.Conn
	closed bool
}

// relayDial bounds the connection to the server, which go-git's own git://
// transport leaves to the system.
const relayDial = 30 * time.Second

// startRelay connects to ep's server and listens on loopback for go-git's
// connection, returning the endpoint to give go-git instead of ep.
func startRelay(ep *gittransport.Endpoint) (*relay, *gittransport.Endpoint, error) {
	port := ep.Port
	if port <= 0 {
		port = 9418
	}
	up, err := net.DialTimeout("tcp", net.JoinHostPort(ep.Host, strconv.Itoa(port)), relayDial)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		up.Close()
		return nil, nil, err
	}
	host := ep.Host // as go-git's git transport writes host=
	if ep.Port != 9418 {
		host = net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	}
	r := &relay{ln: ln, up: up, host: host}
	go r.serve()
	rep := *ep
	rep.Host, rep.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	return r, &rep, nil
}

// serve takes go-git's one connection and relays it.
func (r *relay) serve() {
	c, err := r.ln.Accept()
	r.ln.Close()
	if err != nil {
		r.close()
		return
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		c.Close()
		return
	}
	r.client = c
	r.mu.Unlock()
	go func() {
		defer r.close()
		if r.request(c) == nil {
			io.Copy(r.up, c)
		}
	}()
	defer r.close()
	up := bufio.NewReaderSize(r.up, 64<<10)
	if r.advertisement(up, c) == nil {
		io.Copy(c, up)
	}
}

// request passes on go-git's request line with host= naming the real server,
// not the relay.
func (r *relay) request(c net.Conn) error {
	line, err := readPkt(c)
	if err != nil {
		return err
	}
	if i := bytes.Index(line, []byte("\x00host=")); i >= 0 {
		rest := line[i+len("\x00host="):]
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			end = len(rest)
		}
		line = append(append(append([]byte{}, line[:i+len("\x00host=")]...), r.host...), rest[end:]...)
	}
	_, err = fmt.Fprintf(r.up, "%04x%s", len(line)+4, line)
	return err
}

// advertisement passes on the server's pkt-lines up to the first flush,
// cutting the connection once they pass maxAdvertisement bytes.
func (r *relay) advertisement(up *bufio.Reader, c net.Conn) error {
	w := bufio.NewWriterSize(c, 64<<10)
	buf := make([]byte, 4+0xffff)
	var n int64
	for {
		if _, err := io.ReadFull(up, buf[:4]); err != nil {
			return err
		}
		size, err := strconv.ParseUint(string(buf[:4]), 16, 16)
		if err != nil {
			return err
		}
		size = max(size, 4)
		if n += int64(size); n > maxAdvertisement {
			r.tooLarge.Store(true)
			return errors.New("advertisement too large")
		}
		if _, err := io.ReadFull(up, buf[4:size]); err != nil {
			return err
		}
		if _, err := w.Write(buf[:size]); err != nil {
			return err
		}
		if string(buf[:4]) == "0000" {
			return w.Flush()
		}
		if up.Buffered() == 0 { // the server paused: let go-git see what came
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// readPkt reads one pkt-line's payload.
func readPkt(rd io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(rd, head[:]); err != nil {
		return nil, err
	}
	var b [2]byte
	if _, err := hex.Decode(b[:], head[:]); err != nil {
		return nil, err
	}
	size := int(b[0])<<8 | int(b[1])
	if size < 4 {
		return nil, errors.New("not a request line")
	}
	line := make([]byte, size-4)
	_, err := io.ReadFull(rd, line)
	return line, err
}

// explain turns the error of an advertisement the relay cut into one that
// says so.
func (r *relay) explain(err error) error {
	if err != nil && r.tooLarge.Load() {
		return advertTooLarge()
	}
	return err
}

func (r *relay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	r.ln.Close()
	r.up.Close()
	if r.client != nil {
		r.client.Close()
	}
}
