package gitlog

// The journal makes a commit durable with one append and one sync, and no new
// file.
//
// A commit appends every object it made and the ref's old and new values to
// memvault/journal as one checksummed record and syncs that one file: then it
// is acknowledged. The objects are not written as loose files (creating a file
// costs more than the sync: about 0.8 ms of kernel time an inode on the
// machines this runs on, against 0.15 ms for an fdatasync), and the ref's file
// is not moved: memvault's readers, in every process, take objects and refs
// from the journal first (see journal.Index and Repo.Ref).
//
// The files git reads lag behind, and never point past what git can read.
// Every journal.FlushBytes of journal, when the process closes, after a pause in
// writing, before a manual pack, and when a vault is opened with a journal no
// live writer holds, flushJournal writes the journal's objects as one pack and
// syncs it, then moves each ref the journal moved and syncs its folder, then
// starts the journal over under a new epoch. A crash between two of those steps
// leaves a journal that the next flush completes: packing its objects again is
// harmless (see mergePacks), and a ref that holds a value the journal gave it
// is moved on.
//
// Every reader checks the versions: a header or record kind this build does
// not know is a newer memvault's, and is never truncated or written over
// (ErrNewerFormat).

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
)

func (r *Repo) journalPath() string { return filepath.Join(r.dir, stateDir, journal.Name) }

// persist makes objs and the move of ref from old to new (ZeroHash: a deletion)
// durable in the journal. The ref's file is not touched: memvault's readers take
// the ref from the journal (see Repo.Ref), and the file, which git reads, moves
// when a flush has put the objects it needs into a pack. The caller holds the
// lock.
func (r *Repo) persist(ref string, old, new Hash, objs []rawObject) error {
	return r.persistAt(ref, old, new, objs, time.Time{})
}

// persistAt is persist for a move made at when (a commit made here, at its
// committer time), which the reflog records; a zero when is the clock's now.
func (r *Repo) persistAt(ref string, old, new Hash, objs []rawObject, when time.Time) error {
	size, err := r.journal.Append(&r.jobjs, journal.Record{Ref: ref, Old: old, New: new, Objects: objs})
	if err != nil {
		return fmt.Errorf("gitlog: journal: %w", err)
	}
	r.recordMove(ref, old, new, when)
	if size >= journal.FlushBytes {
		// The move is durable and acknowledged from here on: a flush that
		// fails (a full disk) leaves the journal as it is, for the next one.
		r.flushJournal(context.Background(), true)
		return nil
	}
	r.armIdleFlush()
	return nil
}

// Flush writes the journal's objects into a pack and starts the journal over,
// so that plain git, which does not read memvault's journal, finds every object.
// Close and a pause in writing do it too; Flush is for a caller that runs git on
// the repository while it stays open.
func (r *Repo) Flush(ctx context.Context) error {
	unlock, err := r.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = r.flushJournal(ctx, false)
	return err
}

// flushJournal packs the journal's objects, moves the refs the journal moved
// to their newest values (see placeRefs) and starts the journal over; it returns
// how many objects it packed. Each step is durable before the next begins, so
// a crash anywhere leaves refs that point only at packed objects, and a journal
// that a later flush completes. The caller holds the writer lock. With
// autoPack, the packs are then consolidated in the background (see
// maybeAutoPack).
func (r *Repo) flushJournal(ctx context.Context, autoPack bool) (int, error) {
	if _, _, err := r.jobjs.Refresh(r.journalPath()); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	objs, moves, empty := r.jobjs.Snapshot()
	if empty {
		return 0, nil
	}
	if err := r.packObjects(ctx, objs); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	if err := r.placeRefs(moves); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	if err := r.journal.Restart(&r.jobjs); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	if autoPack {
		r.maybeAutoPack()
	}
	return len(objs), nil
}

// placeRefs writes each journaled move into the ref's file, durably, once its
// objects are packed. A file that holds the value the journal started from, or
// any value the journal has given it since (a flush cut short, or an older
// memvault that wrote the file as it journaled), takes the newest. A file that
// holds anything else was changed by someone other than memvault (git
// update-ref, a ref deleted by hand) and is left as it is.
func (r *Repo) placeRefs(moves []journal.Move) error {
	dirs := map[string]bool{}
	for _, m := range moves {
		cur, err := r.fileRef(m.Name)
		if err != nil {
			return err
		}
		if cur == m.New || cur != m.Old && !m.Gave[cur] {
			continue
		}
		if m.New.IsZero() {
			err = r.st.RemoveReference(ref(m.Name))
		} else {
			err = r.writeRef(m.Name, m.New)
		}
		if err != nil {
			return err
		}
		dirs[filepath.Dir(r.refPath(m.Name))] = true
	}
	for d := range dirs {
		if err := r.disk.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// recoverAtOpen completes what a writer that was killed, or lost its machine,
// left: the journal's objects go into a pack and the refs it moved take their
// newest values in their files, for git, and the temporary files it was
// writing are removed. memvault's own readers need none of it (they read the
// journal), so it is left to a live writer when one holds the lock: the open
// never waits.
func (r *Repo) recoverAtOpen() error {
	if r.readOnly {
		return nil // nothing can be rewritten: readers read the journal itself
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if busy, err := disk.TryLock(r.lockFile); err != nil || busy {
		return nil
	}
	defer disk.Unlock(r.lockFile)
	r.removeLeftovers()
	if _, _, err := r.jobjs.Refresh(r.journalPath()); errors.Is(err, ErrNewerFormat) {
		return nil // readable as far as this build can; writes refuse
	} else if err != nil {
		return fmt.Errorf("gitlog: journal: %w", err)
	}
	if _, _, empty := r.jobjs.Snapshot(); empty {
		return nil
	}
	_, err := r.flushJournal(context.Background(), false)
	return err
}

// removeLeftovers removes the temporary files of a writer killed before it put
// them in place (see disk.writeTemp): they are made only under the writer lock,
// which the caller holds, so none belongs to a live writer.
func (r *Repo) removeLeftovers() {
	for _, dir := range []string{r.dir, r.StateDir()} {
		tmps, _ := filepath.Glob(filepath.Join(dir, disk.TempPrefix+"*"))
		for _, p := range tmps {
			if disk.IsTempName(filepath.Base(p)) {
				r.disk.Remove(p)
			}
		}
	}
	r.removeStaleTemps()
}
