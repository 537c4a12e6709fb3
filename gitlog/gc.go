package gitlog

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// PackResult is what Pack did: the objects it moved into packs, and the bytes
// under objects/ before and after.
type PackResult struct {
	Objects       int
	Before, After int64
}

// Pack flushes the journal (see flushJournal), moves every loose object (git,
// or an older memvault, writes a few per commit) into one new pack, then
// merges every pack into one, as git gc does, with trees and commits stored as
// deltas (see searchDeltas). The journal is flushed and the packs merged by
// themselves as a vault is used (see maybeAutoPack), geometrically so that no
// merge rewrites the whole history; Pack is for a manual run.
//
// The pack goes in through a packSink (whole, indexed, synced), and only then
// are the loose copies removed, so no object is ever missing: a reader in
// another process that looks for a removed file finds the object in the pack
// after its reindex. Writers are held off only while the journal is flushed;
// what they commit meanwhile waits in the journal for the next flush. Nothing
// unreachable is dropped. Packing the loose objects and merging packs each
// take turns with their own kind across processes (memvault/pack-loose.lock,
// memvault/pack-merge.lock), but not with each other, so a long merge never
// keeps the loose objects from being packed: Pack waits for its turn. A
// temporary pack that a killed packer or fetch left is removed.
func (r *Repo) Pack(ctx context.Context) (PackResult, error) {
	res := PackResult{Before: r.objectBytes()}
	// The journal's objects first, so that everything ends in packs.
	unlockW, err := r.lock(ctx)
	if err != nil {
		return res, err
	}
	flushed, err := r.flushJournal(ctx, false)
	unlockW()
	if err != nil {
		return res, err
	}
	n, err := r.packLoosePhase(ctx, true)
	res.Objects = n + flushed
	if err != nil {
		return res, err
	}
	unlock, _, err := r.packLock(ctx, "pack-merge.lock", true)
	if err != nil {
		return res, err
	}
	defer unlock()
	// One pack and nothing new: it is what the last Pack made, or a pack
	// written whole on purpose; merging it with itself would write it again.
	packs, err := r.listPacks()
	if err == nil && (len(packs) > 1 || len(packs) == 1 && res.Objects > 0) {
		// The smallest first, as consolidate merges them: the newest.
		sort.Slice(packs, func(i, j int) bool { return packs[i].Objects < packs[j].Objects })
		err = r.mergeAway(ctx, packs)
	}
	res.After = r.objectBytes()
	return res, err
}

// objectBytes is the size of the files under objects/, as far as it can be
// read while other processes pack.
func (r *Repo) objectBytes() int64 {
	var n int64
	filepath.WalkDir(filepath.Join(r.dir, "objects"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// packLoosePhase packs the loose objects under pack-loose.lock.
func (r *Repo) packLoosePhase(ctx context.Context, wait bool) (int, error) {
	unlock, ok, err := r.packLock(ctx, "pack-loose.lock", wait)
	if err != nil || !ok {
		return 0, err
	}
	defer unlock()
	r.removeStaleTemps()
	return r.packLoose(ctx)
}

// packLock takes the lock file name in memvault/. With wait it waits for
// another packer to finish, or for ctx; without, ok is false while one runs.
func (r *Repo) packLock(ctx context.Context, name string, wait bool) (unlock func(), ok bool, err error) {
	f, err := r.disk.OpenFile(filepath.Join(r.dir, stateDir, name), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("gitlog: pack: %w", err)
	}
	unlock = func() { f.Close() } // closing unlocks
	if !wait {
		busy, err := disk.TryLock(f)
		if err != nil || busy {
			f.Close()
			if err != nil {
				return nil, false, fmt.Errorf("gitlog: pack: lock: %w", err)
			}
			return nil, false, nil
		}
		return unlock, true, nil
	}
	if err := disk.LockContext(ctx, f, func() { f.Close() }); err != nil {
		return nil, false, fmt.Errorf("gitlog: pack: lock: %w", err)
	}
	return unlock, true, nil
}

// staleAfter is how long a temporary file under objects/pack goes unwritten
// before a packer takes it for the leftover of a killed process. A live fetch
// or pack writes to its file all the time.
const staleAfter = time.Hour

// removeStaleTemps removes the temporary packs and indexes that a killed packer
// or fetch left behind.
func (r *Repo) removeStaleTemps() {
	tmps, _ := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "tmp_*"))
	for _, f := range tmps {
		if fi, err := os.Stat(f); err == nil && time.Since(fi.ModTime()) > staleAfter {
			r.disk.Remove(f)
		}
	}
}

// packLoose moves every loose object into one new pack.
func (r *Repo) packLoose(ctx context.Context) (int, error) {
	hs, files, err := r.looseObjects()
	if err != nil || len(hs) == 0 {
		return 0, err
	}
	if err := r.writeNewPack(ctx, hs); err != nil {
		return 0, err
	}
	for _, f := range files {
		if err := r.disk.Remove(f); err != nil && !os.IsNotExist(err) {
			return 0, fmt.Errorf("gitlog: pack: %w", err)
		}
		r.disk.Remove(filepath.Dir(f)) // once empty
	}
	return len(hs), nil
}

// writeNewPack writes the objects hs, read through the repository, as one new
// pack, indexed as it is written, trees and commits as deltas where they can
// be (see searchDeltas).
func (r *Repo) writeNewPack(ctx context.Context, hs []Hash) error {
	window, depth := r.deltaConfig()
	load := func(h Hash) ([]byte, error) {
		_, data, err := r.readObject(plumbing.AnyObject, h)
		return data, err
	}
	newBuilder := func(n int) (*pack.Builder, error) { return r.newPackBuilder(ctx, n) }
	if err := pack.WriteFrom(ctx, newBuilder, hs, r.openObject, load, window, depth); err != nil {
		return fmt.Errorf("gitlog: pack: %w", err)
	}
	return nil
}

// looseObjects lists the loose objects, by name and file.
func (r *Repo) looseObjects() (hs []Hash, files []string, err error) {
	dir := filepath.Join(r.dir, "objects")
	fans, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("gitlog: list objects: %w", err)
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		es, err := os.ReadDir(filepath.Join(dir, fan.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // emptied and removed by another packer meanwhile
		}
		if err != nil {
			return nil, nil, fmt.Errorf("gitlog: list objects: %w", err)
		}
		for _, e := range es {
			var h Hash
			if b, err := hex.DecodeString(fan.Name() + e.Name()); err != nil || len(b) != len(h) {
				continue // a temporary file, or not git's
			} else {
				copy(h[:], b)
			}
			hs = append(hs, h)
			files = append(files, filepath.Join(dir, fan.Name(), e.Name()))
		}
	}
	return hs, files, nil
}
