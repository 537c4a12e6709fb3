package gitlog

// The journal makes a commit durable with one sync instead of one per file.
//
// Syncing each new object file, its directory, the ref and its directory costs a
// dozen fsyncs a commit (about 5 ms here). Instead, Commit appends every object it
// wrote and the branch's old and new values to memvault/journal as one checksummed
// record and syncs that one file; it puts the loose objects in place by rename
// while that sync runs, and the ref once it is done, without syncing them. Every checkpointBytes of journal, one
// syncfs makes all those files durable and the journal starts over.
//
// After a machine crash, the next Open replays the journal: it rewrites any object
// file that is missing or differs from the journal's bytes and points the branch at
// the newest journaled commit. A process that is killed (rather than the machine)
// loses nothing either: files are put in place by rename, so the page cache holds
// either the old or the new state; the journal's header names the boot it was
// written in, and a journal from the current boot needs no replay.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

const (
	journalName     = "journal"
	journalMagic    = "memvault journal v1\n"
	recordMagic     = 0x4d564a52 // "MVJR": a move of Branch
	refRecordMagic  = 0x4d564a46 // "MVJF": a move of the ref the record names
	checkpointBytes = 4 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func (r *Repo) journalPath() string { return filepath.Join(r.dir, stateDir, journalName) }

func journalHeader() []byte { return []byte(journalMagic + "boot " + bootID() + "\n") }

// persist makes objs and the move of ref from old to new durable, then puts them
// in place. The caller holds the lock.
func (r *Repo) persist(ref plumbing.ReferenceName, old, new Hash, objs []rawObject) error {
	loose := make([][]byte, len(objs))
	for i, o := range objs {
		loose[i] = looseBytes(o)
	}
	// The loose objects go in place while the journal syncs, each in its own
	// goroutine: creating a file waits on the file system's own journal, and
	// the waits overlap. Only the branch must wait for the sync. An object put
	// in place before a crash that loses its record is one nothing names.
	// The new value of the ref is written to its temporary file meanwhile too.
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Go(func() { errs[i] = r.writeLoose(o.hash, loose[i]) })
	}
	var refTmp string
	var refErr error
	wg.Go(func() { refTmp, refErr = r.prepareRef(ref, new) })
	size, err := r.appendJournal(encodeRecord(ref, old, new, objs, loose))
	wg.Wait()
	if err == nil {
		err = errors.Join(errs...)
		if err != nil {
			err = fmt.Errorf("gitlog: write object: %w", err)
		}
	} else {
		err = fmt.Errorf("gitlog: journal: %w", err)
	}
	if err == nil && refErr != nil {
		err = fmt.Errorf("gitlog: write ref: %w", refErr)
	}
	if err != nil {
		if refErr == nil {
			os.Remove(refTmp)
		}
		return err
	}
	if err := r.placeRef(ref, refTmp); err != nil {
		return fmt.Errorf("gitlog: write ref: %w", err)
	}
	if size >= checkpointBytes {
		if err := r.checkpoint(); err != nil {
			return err
		}
	}
	r.maybeAutoPack()
	return nil
}

// encodeRecord frames one journal record. A record that moves Branch keeps the
// first format (recordMagic), which names no ref, so journals stay readable both
// ways; a record for any other ref (refRecordMagic) starts with its name.
func encodeRecord(ref plumbing.ReferenceName, old, new Hash, objs []rawObject, loose [][]byte) []byte {
	var p bytes.Buffer
	magic := uint32(recordMagic)
	if ref != Branch {
		magic = refRecordMagic
		binary.Write(&p, binary.BigEndian, uint16(len(ref)))
		p.WriteString(string(ref))
	}
	p.Write(old[:])
	p.Write(new[:])
	binary.Write(&p, binary.BigEndian, uint32(len(objs)))
	for i, o := range objs {
		p.Write(o.hash[:])
		binary.Write(&p, binary.BigEndian, uint32(len(loose[i])))
		p.Write(loose[i])
	}
	rec := make([]byte, 12, 12+p.Len())
	binary.BigEndian.PutUint32(rec[0:], magic)
	binary.BigEndian.PutUint32(rec[4:], uint32(p.Len()))
	binary.BigEndian.PutUint32(rec[8:], crc32.Checksum(p.Bytes(), crcTable))
	return append(rec, p.Bytes()...)
}

// appendJournal appends rec, syncs it, and returns the journal's new size. The
// journal stays open: it is only ever truncated in place, never replaced, so every
// process's handle names the same file.
func (r *Repo) appendJournal(rec []byte) (int64, error) {
	if r.journal == nil {
		f, err := os.OpenFile(r.journalPath(), os.O_RDWR|os.O_APPEND, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			if err := writeFileAtomic(r.journalPath(), journalHeader(), 0o600, true); err != nil {
				return 0, err
			}
			f, err = os.OpenFile(r.journalPath(), os.O_RDWR|os.O_APPEND, 0o600)
		}
		if err != nil {
			return 0, err
		}
		r.journal = f
	}
	if _, err := r.journal.Write(rec); err != nil {
		return 0, err
	}
	if err := fdatasync(r.journal); err != nil {
		return 0, err
	}
	fi, err := r.journal.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// checkpoint makes every file written so far durable and empties the journal.
func (r *Repo) checkpoint() error {
	if err := syncFS(r.dir); err != nil {
		return fmt.Errorf("gitlog: checkpoint: %w", err)
	}
	f, err := os.OpenFile(r.journalPath(), os.O_RDWR|os.O_APPEND, 0o600)
	if err == nil {
		err = f.Truncate(0)
		if err == nil {
			_, err = f.Write(journalHeader())
		}
		if err == nil {
			err = fdatasync(f)
		}
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("gitlog: checkpoint: %w", err)
	}
	return nil
}

type record struct {
	ref      plumbing.ReferenceName
	old, new Hash
	objs     []rawObject // data holds the loose bytes
}

// readJournal returns the journal's boot id and its whole records; a torn or
// corrupt tail (a commit that was never acknowledged) ends the list.
func readJournal(data []byte) (boot string, recs []record) {
	if !bytes.HasPrefix(data, []byte(journalMagic)) {
		return "", nil
	}
	data = data[len(journalMagic):]
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data, []byte("boot ")) {
		return "", nil
	}
	boot, data = string(data[len("boot "):nl]), data[nl+1:]
	for len(data) >= 12 {
		magic := binary.BigEndian.Uint32(data)
		if magic != recordMagic && magic != refRecordMagic {
			break
		}
		n := int(binary.BigEndian.Uint32(data[4:]))
		if len(data)-12 < n {
			break
		}
		p := data[12 : 12+n]
		if crc32.Checksum(p, crcTable) != binary.BigEndian.Uint32(data[8:]) {
			break
		}
		rec, ok := decodeRecord(magic, p)
		if !ok {
			break
		}
		recs = append(recs, rec)
		data = data[12+n:]
	}
	return boot, recs
}

func decodeRecord(magic uint32, p []byte) (record, bool) {
	rec := record{ref: Branch}
	if magic == refRecordMagic {
		if len(p) < 2 {
			return rec, false
		}
		n := int(binary.BigEndian.Uint16(p))
		if len(p) < 2+n {
			return rec, false
		}
		rec.ref, p = plumbing.ReferenceName(p[2:2+n]), p[2+n:]
	}
	if len(p) < 44 {
		return rec, false
	}
	copy(rec.old[:], p)
	copy(rec.new[:], p[20:])
	n := binary.BigEndian.Uint32(p[40:])
	p = p[44:]
	for ; n > 0; n-- {
		if len(p) < 24 {
			return rec, false
		}
		var o rawObject
		copy(o.hash[:], p)
		l := int(binary.BigEndian.Uint32(p[20:]))
		if len(p)-24 < l {
			return rec, false
		}
		o.data = p[24 : 24+l]
		rec.objs = append(rec.objs, o)
		p = p[24+l:]
	}
	return rec, len(p) == 0
}

// recoverIfNeeded replays the journal when it holds records from an earlier boot.
func (r *Repo) recoverIfNeeded() error {
	if r.readOnly {
		return nil // nothing can be rewritten: read what the files hold
	}
	f, err := os.Open(r.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitlog: journal: %w", err)
	}
	head := make([]byte, len(journalHeader())+12)
	n, _ := io.ReadFull(f, head)
	f.Close()
	boot, _ := readJournal(head[:n])
	if n < len(head) || (boot == bootID() && boot != "") {
		return nil // no record, or written since this boot: the page cache holds it all
	}
	return r.replay()
}

// replay rewrites what a crash may have lost, under the lock.
func (r *Repo) replay() error {
	unlock, err := r.lock(context.Background())
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(r.journalPath())
	if err != nil {
		return fmt.Errorf("gitlog: journal: %w", err)
	}
	_, recs := readJournal(data)
	if len(recs) == 0 {
		return nil
	}
	chains := map[plumbing.ReferenceName]map[Hash]bool{}
	last := map[plumbing.ReferenceName]Hash{}
	var refs []plumbing.ReferenceName
	for _, rec := range recs {
		chain := chains[rec.ref]
		if chain == nil {
			chain = map[Hash]bool{}
			chains[rec.ref] = chain
			refs = append(refs, rec.ref)
		}
		chain[rec.old], chain[rec.new] = true, true
		last[rec.ref] = rec.new
		for _, o := range rec.objs {
			if err := r.restoreObject(o.hash, o.data); err != nil {
				return fmt.Errorf("gitlog: replay journal: %w", err)
			}
		}
	}
	// A ref that still holds a value the journal knows was moved on (or lost its
	// file) takes the journal's newest; one that was moved some other way is left.
	for _, ref := range refs {
		cur, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(string(ref))))
		curHash := plumbing.NewHash(string(bytes.TrimSpace(cur)))
		if err != nil || len(bytes.TrimSpace(cur)) != 40 || chains[ref][curHash] {
			if err := r.writeRef(ref, last[ref]); err != nil {
				return fmt.Errorf("gitlog: replay journal: %w", err)
			}
		}
	}
	return r.checkpoint()
}

func (r *Repo) restoreObject(h Hash, z []byte) error {
	p := r.loosePath(h)
	have, err := os.ReadFile(p)
	if err == nil && bytes.Equal(have, z) {
		return nil
	}
	if errors.Is(err, os.ErrNotExist) && r.st.HasEncodedObject(h) == nil {
		return nil // packed since
	}
	os.Remove(p)
	return r.writeLoose(h, z)
}
