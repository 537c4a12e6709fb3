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
// from the journal first (see journalObjects and Repo.Ref).
//
// The files git reads lag behind, and never point past what git can read.
// Every flushBytes of journal, when the process closes, after a pause in
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
	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/record"
)

const (
	journalName = "journal"
	flushBytes  = 4 << 20
	// The record kinds: MVJR (v1) moved Branch, its objects as loose files'
	// bytes; MVJF (v1) moved the ref it names, likewise; MVJO (v2) moves the
	// ref it names, its objects as type, size and zlib of their data.
	tagV1Branch = "MVJR"
	tagV1Ref    = "MVJF"
	tagObjects  = "MVJO"
)

// journalFormat is the journal as a record file: version 2 is written, with
// the boot it was written in and an epoch that changes each time the journal
// starts over, so a reader in another process knows that what it read of the
// journal before is gone; version 1, which had no epoch, is still read.
var journalFormat = record.Format{
	Kind:    "journal",
	Version: 2,
	Fields:  map[int][]string{1: {"boot"}, 2: {"boot", "epoch"}},
	Tags:    []string{tagV1Branch, tagV1Ref, tagObjects},
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func (r *Repo) journalPath() string { return filepath.Join(r.dir, stateDir, journalName) }

// journalHeader starts a journal under a new epoch.
func journalHeader() []byte {
	var e [8]byte
	rand.Read(e[:])
	return journalFormat.Encode(disk.BootID(), hex.EncodeToString(e[:]))
}

// parseJournalHeader reads a header of either version: the boot, the epoch (none
// in v1) and the header's length. ok is false for a header cut short (a writer
// killed as it started the journal) and for anything that is not a journal;
// newer is set for the header of a version this build does not know.
func parseJournalHeader(data []byte) (boot, epoch string, n int, ok, newer bool) {
	h, ok, err := journalFormat.ParseHeader(data)
	if err != nil || !ok {
		return "", "", 0, false, errors.Is(err, ErrNewerFormat)
	}
	if h.Version == 2 {
		epoch = h.Fields[1]
	}
	return h.Fields[0], epoch, h.Len, true, false
}

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
	rec := journalRecord{ref: ref, old: old, new: new, objs: objs}
	size, err := r.appendJournal(encodeRecord(rec), rec)
	if err != nil {
		return fmt.Errorf("gitlog: journal: %w", err)
	}
	r.recordMove(ref, old, new, when)
	if size >= flushBytes {
		// The move is durable and acknowledged from here on: a flush that
		// fails (a full disk) leaves the journal as it is, for the next one.
		r.flushJournal(context.Background(), true)
		return nil
	}
	r.armIdleFlush()
	return nil
}

// encodeRecord frames one journal record.
func encodeRecord(rec journalRecord) []byte {
	var p bytes.Buffer
	binary.Write(&p, binary.BigEndian, uint16(len(rec.ref)))
	p.WriteString(string(rec.ref))
	p.Write(rec.old[:])
	p.Write(rec.new[:])
	binary.Write(&p, binary.BigEndian, uint32(len(rec.objs)))
	// Every object is stored, not deflated: a blob is an age ciphertext,
	// which deflate cannot shrink (see gitobject.Stored), and the journal is
	// read only to replay it: a flush packs its objects from memory, and
	// deflates the commits and trees then, off the write's path. Deflating a tree here cost each write more than the
	// rest of its hashing and framing, and most in a sealed vault, whose
	// names are longer and compress less.
	w := gitobject.Stored.Get().(*zlib.Writer)
	var z bytes.Buffer
	for _, o := range rec.objs {
		z.Reset()
		w.Reset(&z)
		w.Write(o.Data)
		w.Close()
		p.Write(o.Hash[:])
		p.WriteByte(byte(o.Type))
		binary.Write(&p, binary.BigEndian, uint32(len(o.Data)))
		binary.Write(&p, binary.BigEndian, uint32(z.Len()))
		p.Write(z.Bytes())
	}
	gitobject.Stored.Put(w)
	return record.Frame(make([]byte, 0, record.FrameLen(p.Len())), tagObjects, p.Bytes())
}

// appendJournal appends rec, syncs it, adds its objects to the journal's index,
// and returns the journal's new size. The journal stays open: it is only ever
// truncated in place, never replaced, so every process's handle names the same
// file. The caller holds the lock.
func (r *Repo) appendJournal(data []byte, rec journalRecord) (int64, error) {
	if r.journal == nil {
		f, err := r.disk.OpenFile(r.journalPath(), os.O_RDWR|os.O_APPEND, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			if err := r.disk.WriteFileAtomic(r.journalPath(), journalHeader(), 0o600, true); err != nil {
				return 0, err
			}
			f, err = r.disk.OpenFile(r.journalPath(), os.O_RDWR|os.O_APPEND, 0o600)
		}
		if err != nil {
			return 0, err
		}
		r.journal = f
	}
	// Read what other processes appended, and cut off the torn tail a killed
	// writer may have left (never acknowledged): a record appended after it
	// could not be read.
	end, size, err := r.jobjs.refresh(r.journalPath())
	if err != nil {
		return 0, err
	}
	if end == 0 {
		// No whole header: a writer was killed as it started the journal over,
		// after it had packed everything the journal held. Start it over again,
		// or no reader could read the record appended here.
		if err := r.restartJournal(); err != nil {
			return 0, err
		}
		if end, size, err = r.jobjs.refresh(r.journalPath()); err != nil {
			return 0, err
		}
	}
	if size > end {
		if err := r.disk.Truncate(r.journal, end); err != nil {
			return 0, err
		}
	}
	if _, err := r.disk.Write(r.journal, data); err != nil {
		return 0, err
	}
	if err := r.disk.Datasync(r.journal); err != nil {
		return 0, err
	}
	r.jobjs.appended(end, end+int64(len(data)), rec)
	return end + int64(len(data)), nil
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
	if _, _, err := r.jobjs.refresh(r.journalPath()); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	objs, moves, empty := r.jobjs.snapshot()
	if empty {
		return 0, nil
	}
	if err := r.packObjects(ctx, objs); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	if err := r.placeRefs(moves); err != nil {
		return 0, fmt.Errorf("gitlog: flush journal: %w", err)
	}
	if err := r.restartJournal(); err != nil {
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
func (r *Repo) placeRefs(moves []refMove) error {
	dirs := map[string]bool{}
	for _, m := range moves {
		cur, err := r.fileRef(m.name)
		if err != nil {
			return err
		}
		if cur == m.new || cur != m.old && !m.gave[cur] {
			continue
		}
		if m.new.IsZero() {
			err = r.st.RemoveReference(ref(m.name))
		} else {
			err = r.writeRef(m.name, m.new)
		}
		if err != nil {
			return err
		}
		dirs[filepath.Dir(r.refPath(m.name))] = true
	}
	for d := range dirs {
		if err := r.disk.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// restartJournal empties the journal under a new epoch.
func (r *Repo) restartJournal() error {
	f := r.journal
	if f == nil {
		var err error
		if f, err = r.disk.OpenFile(r.journalPath(), os.O_RDWR|os.O_APPEND, 0o600); err != nil {
			return err
		}
		defer f.Close()
	}
	head := journalHeader()
	if err := r.disk.Truncate(f, 0); err != nil {
		return err
	}
	if _, err := r.disk.Write(f, head); err != nil {
		return err
	}
	if err := r.disk.Datasync(f); err != nil {
		return err
	}
	r.jobjs.restarted(head)
	return nil
}

type journalRecord struct {
	ref      string
	old, new Hash
	objs     []rawObject
}

// readJournal returns the journal's boot id and its whole records; a torn or
// corrupt tail (a commit that was never acknowledged) ends the list. The error
// wraps ErrNewerFormat for a journal or record of a newer memvault.
func readJournal(data []byte) (boot string, recs []journalRecord, err error) {
	boot, _, n, ok, newer := parseJournalHeader(data)
	if newer {
		return "", nil, fmt.Errorf("the journal: %w", ErrNewerFormat)
	}
	if !ok {
		return "", nil, nil
	}
	recs, _, err = readRecords(data[n:], false)
	return boot, recs, err
}

// readRecords decodes the whole records at the start of data and returns them
// with the bytes they took. What follows the last whole record is a torn tail
// (a write cut off before it was acknowledged), except a whole, checksummed
// record of a kind this build does not know: that is a newer memvault's, and
// the error wraps ErrNewerFormat. Each object must hash to its name, or the
// records end there; a foreign journal's (another repository's, read for a
// local-path remote) must also be at most largeObject bytes.
func readRecords(data []byte, foreign bool) (recs []journalRecord, used int, err error) {
	framed, _, err := journalFormat.ParseRecords(data)
	for _, f := range framed {
		rec, ok := decodeRecord(f.Tag, f.Body, foreign)
		if !ok {
			return recs, used, nil
		}
		recs = append(recs, rec)
		used += record.FrameLen(len(f.Body))
	}
	return recs, used, err
}

func decodeRecord(tag string, p []byte, foreign bool) (journalRecord, bool) {
	rec := journalRecord{ref: Branch}
	if tag != tagV1Branch {
		if len(p) < 2 {
			return rec, false
		}
		n := int(binary.BigEndian.Uint16(p))
		if len(p) < 2+n {
			return rec, false
		}
		rec.ref, p = string(p[2:2+n]), p[2+n:]
		// The name becomes a path when the ref's file is written: a damaged
		// or crafted record must not name a file outside refs/.
		name, ok := strings.CutPrefix(string(rec.ref), "refs/")
		if !ok || CheckRefName(name) != nil {
			return rec, false
		}
	}
	if len(p) < 44 {
		return rec, false
	}
	copy(rec.old[:], p)
	copy(rec.new[:], p[20:])
	n := binary.BigEndian.Uint32(p[40:])
	p = p[44:]
	for ; n > 0; n-- {
		var o rawObject
		var ok bool
		if tag == tagObjects {
			o, p, ok = decodeObject(p)
		} else {
			o, p, ok = decodeLoose(p)
		}
		// Every object must hash to its name, in any journal: a vault folder
		// may come from anywhere, and its journal is flushed into a pack when
		// it is opened.
		if !ok || foreign && len(o.Data) > largeObject || computeHash(o.Type, o.Data) != o.Hash {
			return rec, false
		}
		rec.objs = append(rec.objs, o)
	}
	return rec, len(p) == 0
}

// decodeObject decodes one object of a v2 record: hash, type, size, zlib length
// and zlib of the data.
func decodeObject(p []byte) (rawObject, []byte, bool) {
	var o rawObject
	if len(p) < 29 {
		return o, p, false
	}
	copy(o.Hash[:], p)
	o.Type = plumbing.ObjectType(p[20])
	size := binary.BigEndian.Uint32(p[21:])
	zlen := int(binary.BigEndian.Uint32(p[25:]))
	if len(p)-29 < zlen || int64(size) > gitobject.MaxInflate(zlen) {
		return o, p, false
	}
	data, ok := gitobject.InflateExactly(p[29:29+zlen], int(size))
	if !ok {
		return o, p, false
	}
	o.Data = data
	return o, p[29+zlen:], true
}

// decodeLoose decodes one object of a v1 record: hash, length and the bytes of
// its loose file, zlib("<type> <size>\0<data>").
func decodeLoose(p []byte) (rawObject, []byte, bool) {
	var o rawObject
	if len(p) < 24 {
		return o, p, false
	}
	copy(o.Hash[:], p)
	l := int(binary.BigEndian.Uint32(p[20:]))
	if len(p)-24 < l {
		return o, p, false
	}
	zr, err := objfile.NewReader(bytes.NewReader(p[24 : 24+l]))
	if err != nil {
		return o, p, false
	}
	defer zr.Close()
	t, size, err := zr.Header()
	if err != nil || size < 0 || size > gitobject.MaxInflate(l) {
		return o, p, false
	}
	o.Type, o.Data = t, make([]byte, size)
	if _, err := io.ReadFull(zr, o.Data); err != nil {
		return o, p, false
	}
	return o, p[24+l:], true
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
	if _, _, err := r.jobjs.refresh(r.journalPath()); errors.Is(err, ErrNewerFormat) {
		return nil // readable as far as this build can; writes refuse
	} else if err != nil {
		return fmt.Errorf("gitlog: journal: %w", err)
	}
	if _, _, empty := r.jobjs.snapshot(); empty {
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
