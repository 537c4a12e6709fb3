package gitlog

// Local paths: file:// URLs and plain paths are served in process. A fetch goes
// through go-git's server with memvault's own upload-pack (what to send, from
// missingObjects), and transfer.go's client talks to it as to any other
// server. A push is a write into the target repository (sendLocal): a
// compare-and-swap of its branch under its writer lock, the pack written and
// synced there by this repository's pack writer.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
	"github.com/memvault/memvault/gitlog/internal/pack"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/utils/ioutil"
)

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
	sto, err := loadLocal(ep, sess)
	return &localUpload{UploadPackSession: sess, dir: ep.Path, sto: sto}, err
}

// NewReceivePackSession refuses: a push to a local path is written by the
// pushing repository itself (see sendLocal), and go-git's receive-pack sets a
// ref whatever it holds.
func (s localServer) NewReceivePackSession(*transport.Endpoint, transport.AuthMethod) (transport.ReceivePackSession, error) {
	return nil, errors.New("gitlog: a push to a local path is taken by Repo.Push, not by receive-pack")
}

// loadLocal opens the storage of the repository a session serves, closing the
// session when it cannot. It keeps up to openPacks pack files open: a session
// that reads many objects reopened a pack for each one without them (a
// quarter of the time a fetch of 1,000 commits took), and must then close the
// storage when it ends.
func loadLocal(ep *transport.Endpoint, sess io.Closer) (journaled, error) {
	if _, err := server.DefaultLoader.Load(ep); err != nil {
		sess.Close()
		return journaled{}, err
	}
	// As go-git's loader, but large objects are streamed when served, never
	// inflated whole: the remote may hold a zlib bomb. A vault that a memvault
	// process has open may hold its newest objects in its journal only.
	st := filesystem.NewStorageWithOptions(osfs.New(ep.Path), cache.NewObjectLRUDefault(),
		filesystem.Options{LargeObjectThreshold: largeObject, MaxOpenDescriptors: openPacks})
	j := &journal.Index{MaxObject: largeObject}
	if _, _, err := j.Refresh(filepath.Join(ep.Path, stateDir, journal.Name)); err != nil {
		sess.Close()
		return journaled{}, err
	}
	j.Close()
	return journaled{st, j}, nil
}

// journaled is the storage of a local repository with the objects of its
// journal (see journal.Index) read at the start of a session.
type journaled struct {
	*filesystem.Storage
	j *journal.Index
}

func (s journaled) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := s.j.Get(fromGG(h)); ok && (t == plumbing.AnyObject || t == o.Type) {
		return memoryObject(o), nil
	}
	return s.Storage.EncodedObject(t, h)
}

func (s journaled) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := s.j.Get(fromGG(h)); ok {
		return nil
	}
	return s.Storage.HasEncodedObject(h)
}

func (s journaled) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := s.j.Get(fromGG(h)); ok {
		return int64(len(o.Data)), nil
	}
	return s.Storage.EncodedObjectSize(h)
}

// sendLocal pushes h into the repository at dir, on this machine, as a write
// like any other there (go-git's receive-pack set a ref whatever it held and
// synced nothing): under its writer lock its main must still be known, as it
// reads it; the pack goes in whole and synced; the branch moves through its
// journal, flushed so that git reads it at once.
//
// The pack's index is the one this repository's pack writer builds on the way,
// as for a flush or a merge of packs, not one read back from the pack as a
// fetched pack's is: every object comes from this repository, whose packs were
// indexed on arrival or written so, and an entry copied from them is checked
// against their index's CRC-32. Nothing the target holds goes into the pack.
func (r *Repo) sendLocal(ctx context.Context, dir string, known, h Hash, lines *progressLines) (err error) {
	dst, err := openOn(localDisk, dir)
	if err != nil {
		return err
	}
	// The pushed pack is merged with the others only once they are many, as
	// git's receive-pack runs gc --auto, which packs past gc.autoPackLimit:
	// a geometric merge at every push made the pusher wait for a search for
	// deltas in the remote's packs, which reads and compares what it just
	// sent.
	dst.mergeAbove = receivedPacks
	defer func() {
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}()
	// What to send is found before the target's writers are held off; under
	// their lock the branch must still be where it was.
	theirs, err := dst.Ref(Branch)
	if err != nil || theirs == h {
		return err
	}
	objs, err := r.toSend(ctx, theirs, known, h)
	if err != nil {
		return err
	}
	unlock, err := dst.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := dst.Ref(Branch)
	if err != nil {
		return err
	}
	if cur != theirs {
		// ErrForceNeeded reads as ErrRejected in transferError.
		return fmt.Errorf("the remote's main moved to %s meanwhile (fetch first): %w", cur, git.ErrForceNeeded)
	}
	b, err := dst.newPackBuilder(ctx, len(objs))
	if err != nil {
		return err
	}
	m := newMeter(lines.source(), "Sending")
	b.SetMeter(m)
	if err := r.writeSent(ctx, b, objs); err != nil {
		b.Abort()
		return err
	}
	if err := b.Finish(); err != nil {
		return err
	}
	m.Done()
	if err := dst.persist(Branch, theirs, h, nil); err != nil {
		return err
	}
	_, err = dst.flushJournal(ctx, false)
	return err
}

// localDisk is the disk a push into a local path writes through; the crash
// explorer hooks it.
var localDisk = disk.OS

// receivedPacks is how many packs a repository that takes pushes from a
// local path holds before the pushes start merging them (geometrically, see
// consolidate): under the ten a vault keeps at most.
const receivedPacks = 8

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
	packs := pack.NewSet(u.dir)
	objs, err := missingObjects(ctx, packSource{u.sto, packs}, fromGGHashes(req.Wants), fromGGHashes(req.Haves))
	packs.Close()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	u.pr, u.done = pr, make(chan struct{})
	go func() {
		defer close(u.done)
		reuse := pack.OpenReuse(u.dir, objs)
		defer reuse.Close()
		pw.CloseWithError(pack.WritePack(ctx, pw, objs, storerReader(u.sto), reuse, pack.DefaultWindow, pack.DefaultDepth))
	}()
	return packp.NewUploadPackResponseWithPackfile(req, ioutil.NewContextReadCloser(ctx, pr)), nil
}
