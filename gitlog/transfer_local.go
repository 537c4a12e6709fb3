package gitlog

// The local-path server: file:// URLs and plain paths are served in process by
// go-git's server with memvault's own upload-pack (what to send, from
// missingObjects) and receive-pack (a compare-and-swap of each ref under an
// flock, the pack installed whole and synced). transfer.go is the client that
// talks to it, as to any other server.

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"io"
	"path/filepath"
	"strings"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/utils/ioutil"
)

// localTransport makes file:// and plain paths work in process, without the git
// binary that go-git's default file transport runs.
var localTransport sync.Once

func installLocal() {
	localTransport.Do(func() { client.InstallProtocol("file", localServer{server.DefaultServer}) })
}

// localServer is go-git's in-process server, except that upload-pack chooses
// what to send with missingObjects: go-git's own server reads every tree of the
// client's history to know what to leave out, and fails with "object not found"
// on a "have" it does not hold, which a client that diverged always has.
type localServer struct{ transport.Transport }

func (s localServer) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	sess, err := s.Transport.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	sto, err := loadLocal(ep, sess, openPacks)
	return &localUpload{UploadPackSession: sess, dir: ep.Path, sto: sto}, err
}

// NewReceivePackSession serves a push to a local repository with localReceive.
func (s localServer) NewReceivePackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.ReceivePackSession, error) {
	sess, err := s.Transport.NewReceivePackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	sto, err := loadLocal(ep, sess, 0)
	return &localReceive{ReceivePackSession: sess, dir: ep.Path, sto: sto}, err
}

// loadLocal opens the storage of the repository a session serves, closing the
// session when it cannot. It keeps up to keepOpen pack files open: a session
// that reads many objects reopened a pack for each one without them (a
// quarter of the time a fetch of 1,000 commits took), and must then close the
// storage when it ends.
func loadLocal(ep *transport.Endpoint, sess io.Closer, keepOpen int) (journaled, error) {
	if _, err := server.DefaultLoader.Load(ep); err != nil {
		sess.Close()
		return journaled{}, err
	}
	// As go-git's loader, but large objects are streamed when served, never
	// inflated whole: the remote may hold a zlib bomb. A vault that a memvault
	// process has open may hold its newest objects in its journal only.
	st := filesystem.NewStorageWithOptions(osfs.New(ep.Path), cache.NewObjectLRUDefault(),
		filesystem.Options{LargeObjectThreshold: largeObject, MaxOpenDescriptors: keepOpen})
	j := &journalObjects{foreign: true}
	if _, _, err := j.refresh(filepath.Join(ep.Path, stateDir, journalName)); err != nil {
		sess.Close()
		return journaled{}, err
	}
	j.close()
	return journaled{st, j}, nil
}

// journaled is the storage of a local repository with the objects of its
// journal (see journalObjects) read at the start of a session.
type journaled struct {
	*filesystem.Storage
	j *journalObjects
}

func (s journaled) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := s.j.get(fromGG(h)); ok && (t == plumbing.AnyObject || t == o.typ) {
		return memoryObject(o), nil
	}
	return s.Storage.EncodedObject(t, h)
}

func (s journaled) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := s.j.get(fromGG(h)); ok {
		return nil
	}
	return s.Storage.HasEncodedObject(h)
}

func (s journaled) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := s.j.get(fromGG(h)); ok {
		return int64(len(o.data)), nil
	}
	return s.Storage.EncodedObjectSize(h)
}

// localReceive takes a push into a local repository in place of go-git's
// receive-pack, which sets each ref whatever it holds (of two pushes at once the
// later dropped the other's commits), syncs nothing (a shared folder could lose
// an acknowledged push in a power cut), and reads the pack a few bytes at a time.
//
// The repository is opened as memvault opens its own vaults, and the push is a
// write like any other there: under its writer lock, each ref must still hold
// the old value the push names (as memvault reads it, its journal included);
// the pack goes in whole and synced; the refs move through its journal, and the
// journal is flushed so that git reads the pushed branch at once.
// localDisk is the disk a push into a local path writes through; the crash
// explorer hooks it.
var localDisk = osDisk

// receivedPacks is how many packs a repository that takes pushes from a
// local path holds before the pushes start merging them (geometrically, see
// consolidate): under the ten a vault keeps at most.
const receivedPacks = 8

type localReceive struct {
	transport.ReceivePackSession
	dir string
	sto storer.ReferenceStorer
}

func (s *localReceive) ReceivePack(ctx context.Context, req *packp.ReferenceUpdateRequest) (rs *packp.ReportStatus, err error) {
	for _, c := range req.Commands {
		if !strings.HasPrefix(string(c.Name), "refs/heads/") || c.New.IsZero() {
			return nil, fmt.Errorf("gitlog: a push to a local path updates branches only, not %s", c.Name)
		}
	}
	r, err := openOn(localDisk, s.dir)
	if err != nil {
		return nil, err
	}
	// The pushed pack is merged with the others only once they are many, as
	// git's receive-pack runs gc --auto, which packs past gc.autoPackLimit:
	// a geometric merge at every push made the pusher wait for a search for
	// deltas in the remote's packs, which reads and compares what it just
	// sent.
	r.mergeAbove = receivedPacks
	defer func() {
		if cerr := r.Close(); err == nil && cerr != nil {
			rs, err = nil, cerr
		}
	}()
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rs = &packp.ReportStatus{UnpackStatus: "ok"}
	for _, c := range req.Commands {
		cur, err := r.Ref(string(c.Name))
		if err != nil {
			return nil, err
		}
		if cur != fromGG(c.Old) {
			// ErrForceNeeded reads as ErrRejected in transferError.
			return nil, fmt.Errorf("gitlog: %s moved to %s meanwhile (fetch first): %w", c.Name, cur, git.ErrForceNeeded)
		}
		rs.CommandStatuses = append(rs.CommandStatuses, &packp.CommandStatus{ReferenceName: c.Name, Status: "ok"})
	}
	if req.Packfile != nil {
		sink, err := r.newPackSink(ctx)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(sink, ioutil.NewContextReadCloser(ctx, req.Packfile))
		if cerr := sink.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	for _, c := range req.Commands {
		if err := r.persist(string(c.Name), fromGG(c.Old), fromGG(c.New), nil); err != nil {
			return nil, err
		}
	}
	if _, err := r.flushJournal(ctx, false); err != nil {
		return nil, err
	}
	return rs, nil
}

type localUpload struct {
	transport.UploadPackSession
	dir string
	sto journaled // its pack files stay open until Close

	pr   *io.PipeReader // the pack being sent
	done chan struct{}  // closed when the pack is written
}

// Close ends the session: it stops a pack still being written, then closes
// the pack files it read.
func (u *localUpload) Close() error {
	if u.pr != nil {
		u.pr.CloseWithError(errors.New("gitlog: the upload-pack session was closed"))
		<-u.done
	}
	err := u.UploadPackSession.Close()
	if u.sto.Storage != nil {
		if cerr := u.sto.Storage.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func (u *localUpload) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	if req.IsEmpty() {
		return nil, transport.ErrEmptyUploadPackRequest
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if len(req.Shallows) > 0 || req.Depth != nil && !req.Depth.IsZero() {
		return nil, errors.New("gitlog: shallow fetches are not served")
	}
	objs, err := missingObjects(ctx, storerSource{u.sto}, fromGGHashes(req.Wants), fromGGHashes(req.Haves))
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	u.pr, u.done = pr, make(chan struct{})
	go func() {
		defer close(u.done)
		reuse := openReuse(u.dir, objs)
		defer reuse.close()
		pw.CloseWithError(writePack(ctx, pw, objs, storerReader(u.sto), reuse, defaultDeltaWindow, defaultDeltaDepth))
	}()
	return packp.NewUploadPackResponseWithPackfile(req, ioutil.NewContextReadCloser(ctx, pr)), nil
}
