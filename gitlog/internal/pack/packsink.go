package pack

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/memvault/memvault/gitlog/internal/disk"
)

// Meter counts the bytes of a pack as they arrive, for a person to watch.
type Meter interface {
	Count(p []byte)
	Done()
}

// Sink takes a fetched pack into the repository as one pack file and its
// index, instead of a loose file per object: a fetch of a thousand commits is
// one file to write and sync, not five thousand.
//
// The pack goes to a temporary file under objects/pack. Close checks it (every
// object is inflated and named by its content, in bounded memory: see
// IndexPack), writes the index, syncs both,
// and renames the index and then the pack into place, so readers never see a
// pack without its index and a fetch cut off midway leaves no pack at all. The
// pack is durable before Fetch journals the move of the remote's ref, so the
// journal needs no copy of its objects.
type Sink struct {
	d       *disk.Disk
	f       *os.File
	n       int64
	started int64 // bytes whose writeback was started
	// done is called once the pack is in place, at base (its path without
	// ".pack"), with the commits and trees the indexing kept for the pack
	// reader (see Indexer.seeds).
	done  func(base string, seeds []Packed)
	seeds []Packed
	meter Meter // nil for none
	// Ctx bounds the indexing in Close, set by the sink's creator when it
	// has one (nil: none): go-git closes the sink of a fetch through
	// io.Closer, which takes no context, so a cancelled fetch could
	// otherwise index a hostile pack to the end.
	Ctx context.Context
}

// NewSink receives a pack into the repository at dir.
func NewSink(d *disk.Disk, dir string, done func(string, []Packed)) (*Sink, error) {
	f, err := d.CreateTemp(filepath.Join(dir, "objects", "pack"), "tmp_pack_", 0o600)
	if err != nil {
		return nil, fmt.Errorf("gitlog: receive pack: %w", err)
	}
	return &Sink{d: d, f: f, done: done}, nil
}

func (s *Sink) Write(p []byte) (int, error) {
	n, err := s.d.Write(s.f, p)
	s.n += int64(n)
	if s.meter != nil {
		s.meter.Count(p[:n])
	}
	// Start writing back as the pack grows: the sync at the end then has
	// little left, and a writer's sync of the journal meanwhile, which the
	// file system may make wait for the pack's pending blocks, waits for a
	// megabyte at most.
	if s.n-s.started >= writebackStep {
		disk.StartWriteback(s.f, s.started, s.n-s.started)
		s.started = s.n
	}
	return n, err
}

// writebackStep is how much of a pack is written before its writeback starts.
const writebackStep = 1 << 20

// Abort drops what was received.
func (s *Sink) Abort() {
	s.f.Close()
	s.d.Remove(s.f.Name())
}

// Close installs the pack; on any error the temporary file is removed and the
// repository is as it was.
func (s *Sink) Close() error {
	tmp := s.f.Name()
	defer s.d.Remove(tmp) // gone already once renamed into place
	if s.n == 0 {
		return s.f.Close()
	}
	if s.meter != nil {
		s.meter.Done()
	}
	err := s.install()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("gitlog: receive pack: %w", err)
	}
	return nil
}

// closeIndexed installs a pack whose index the writer built (see Builder),
// as Close does.
func (s *Sink) closeIndexed(idx *idxfile.MemoryIndex, sum Hash) error {
	tmp := s.f.Name()
	defer s.d.Remove(tmp)
	err := s.installWith(idx, sum)
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("gitlog: write pack: %w", err)
	}
	return nil
}

func (s *Sink) install() error {
	if _, err := s.f.Seek(0, 0); err != nil {
		return err
	}
	ctx := s.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	x := NewIndexer(DeltaCacheBudget)
	if s.done != nil {
		x.seedLeft = packReadCache
	}
	idx, sum, err := x.Index(ctx, s.f)
	if err != nil {
		return err
	}
	s.seeds = x.seeds
	return s.installWith(idx, sum)
}

func (s *Sink) installWith(idx *idxfile.MemoryIndex, sum Hash) error {
	if n, err := idx.Count(); err != nil || n == 0 {
		return err // an empty pack: nothing to keep
	}
	if err := s.d.Sync(s.f); err != nil {
		return err
	}
	dir := filepath.Dir(s.f.Name())
	idxTmp, err := s.d.CreateTemp(dir, "tmp_idx_", 0o444)
	if err != nil {
		return err
	}
	defer s.d.Remove(idxTmp.Name())
	bw := bufio.NewWriter(s.d.Writer(idxTmp))
	_, err = idxfile.NewEncoder(bw).Encode(idx)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = s.d.Sync(idxTmp)
	}
	if cerr := idxTmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	base := filepath.Join(dir, "pack-"+sum.String())
	// Packs are read-only, as git makes them.
	if err := os.Chmod(s.f.Name(), 0o444); err != nil {
		return err
	}
	if err := s.d.Rename(idxTmp.Name(), base+".idx"); err != nil {
		return err
	}
	if err := s.d.Rename(s.f.Name(), base+".pack"); err != nil {
		return err
	}
	if err := s.d.SyncDir(dir); err != nil {
		return err
	}
	if s.done != nil {
		s.done(base, s.seeds)
	}
	return nil
}

// SetMeter counts the pack's bytes as they arrive.
func (s *Sink) SetMeter(m Meter) { s.meter = m }
