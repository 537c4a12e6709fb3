package gitlog

// Local paths, the repository's side: the transport serves a fetch from a
// path through go-git's server, and asks what to send of the repository
// there, servedRepo (what to send from missingObjects, the pack of it from
// its storage and its journal). A push is a write into the target repository
// (sendLocal): a compare-and-swap of its branch under its writer lock, the
// pack written and synced there by this repository's pack writer. Both read
// or write another repository through gitlog's own storage, which is why
// they stay here and not in the transport.

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
	"github.com/memvault/memvault/gitlog/internal/pack"
	"github.com/memvault/memvault/gitlog/internal/transport"
)

// openServed opens the storage of the repository at dir, which a fetch from
// its path reads. It keeps up to openPacks pack files open: a session that
// reads many objects reopened a pack for each one without them (a quarter of
// the time a fetch of 1,000 commits took), and must then close the storage
// when it ends.
func openServed(dir string) (transport.Served, error) {
	// As go-git's loader, but large objects are streamed when served, never
	// inflated whole: the remote may hold a zlib bomb. A vault that a memvault
	// process has open may hold its newest objects in its journal only.
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(),
		filesystem.Options{LargeObjectThreshold: largeObject, MaxOpenDescriptors: openPacks})
	j := &journal.Index{MaxObject: largeObject}
	if _, _, err := j.Refresh(filepath.Join(dir, stateDir, journal.Name)); err != nil {
		return nil, err
	}
	j.Close()
	return servedRepo{dir, journaled{st, j}}, nil
}

// servedRepo is a repository on this machine that a fetch from its path
// reads; its pack files stay open until Close.
type servedRepo struct {
	dir string
	sto journaled
}

// Missing implements transport.Served.
func (s servedRepo) Missing(ctx context.Context, wants, haves []Hash) ([]Hash, error) {
	packs := pack.NewSet(s.dir)
	defer packs.Close()
	return missingObjects(ctx, packSource{s.sto, packs}, wants, haves)
}

// WritePack implements transport.Served.
func (s servedRepo) WritePack(ctx context.Context, w io.Writer, objs []Hash) error {
	reuse := pack.OpenReuse(s.dir, objs)
	defer reuse.Close()
	return pack.WritePack(ctx, w, objs, storerReader(s.sto), reuse, pack.DefaultWindow, pack.DefaultDepth)
}

// Close implements transport.Served.
func (s servedRepo) Close() error { return s.sto.Storage.Close() }

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
func (r *Repo) sendLocal(ctx context.Context, dir string, known, h Hash, m pack.Meter) (err error) {
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
		// ErrForceNeeded reads as ErrRejected in the transport's errors.
		return fmt.Errorf("the remote's main moved to %s meanwhile (fetch first): %w", cur, git.ErrForceNeeded)
	}
	b, err := dst.newPackBuilder(ctx, len(objs))
	if err != nil {
		return err
	}
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
