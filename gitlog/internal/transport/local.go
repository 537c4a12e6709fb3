package transport

// Local paths: file:// URLs and plain paths are served in process. A fetch goes
// through go-git's server with memvault's own upload-pack (what to send, and
// the pack of it, from the served repository, Served), and transfer.go's
// client talks to it as to any other server. A push is a write of the
// pushing repository's own into the target (Repo.PushLocal).

import (
	"context"
	"errors"
	"io"

	"github.com/memvault/memvault/gitlog/internal/object"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/utils/ioutil"
)

// localServer is go-git's in-process server, except that upload-pack chooses
// what to send with Served.Missing: go-git's own server reads every tree of the
// client's history to know what to leave out, and fails with "object not found"
// on a "have" it does not hold, which a client that diverged always has.
type localServer struct {
	gittransport.Transport
	repo Repo // opens the repository a session serves
}

func (s localServer) NewUploadPackSession(ep *gittransport.Endpoint, auth gittransport.AuthMethod) (gittransport.UploadPackSession, error) {
	sess, err := s.Transport.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	if _, err := server.DefaultLoader.Load(ep); err != nil {
		sess.Close()
		return nil, err
	}
	src, err := s.repo.ServeLocal(ep.Path)
	if err != nil {
		sess.Close()
		return nil, err
	}
	return &localUpload{UploadPackSession: sess, src: src}, nil
}

// NewReceivePackSession refuses: a push to a local path is written by the
// pushing repository itself (see Repo.PushLocal), and go-git's receive-pack
// sets a ref whatever it holds.
func (s localServer) NewReceivePackSession(*gittransport.Endpoint, gittransport.AuthMethod) (gittransport.ReceivePackSession, error) {
	return nil, errors.New("gitlog: a push to a local path is taken by Repo.Push, not by receive-pack")
}

type localUpload struct {
	gittransport.UploadPackSession
	src Served // holds its pack files open until Close

	pr   *io.PipeReader // the pack being sent
	done chan struct{}  // closed when the pack is written
}

// Close ends the session: it stops a pack still being written, then lets go
// of the served repository.
func (u *localUpload) Close() error {
	if u.pr != nil {
		u.pr.CloseWithError(errors.New("gitlog: the upload-pack session was closed"))
		<-u.done
	}
	err := u.UploadPackSession.Close()
	if cerr := u.src.Close(); err == nil {
		err = cerr
	}
	return err
}

func (u *localUpload) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	if req.IsEmpty() {
		return nil, gittransport.ErrEmptyUploadPackRequest
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if len(req.Shallows) > 0 || req.Depth != nil && !req.Depth.IsZero() {
		return nil, errors.New("gitlog: shallow fetches are not served")
	}
	objs, err := u.src.Missing(ctx, object.FromGoGit(req.Wants), object.FromGoGit(req.Haves))
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	u.pr, u.done = pr, make(chan struct{})
	go func() {
		defer close(u.done)
		pw.CloseWithError(u.src.WritePack(ctx, pw, objs))
	}()
	return packp.NewUploadPackResponseWithPackfile(req, ioutil.NewContextReadCloser(ctx, pr)), nil
}
