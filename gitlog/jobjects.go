package gitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// journalObjects indexes the objects of the journal's records, which are in no
// pack and no loose file until the journal is flushed (see journal.go). Each
// process reads what others appended when it looks for an object it does not
// find elsewhere; the writer adds its own records as it appends them.
//
// Objects are named by their content, so whatever a whole, checksummed record
// held is right forever: an entry never goes stale, it is only dropped to bound
// memory when the journal starts over (a new epoch), once its objects are in a
// pack. Readers look in the journal before the packs, and after a miss read the
// journal again before they list the packs again: a flush installs the pack
// before it empties the journal, so an object is always in one or the other.
type journalObjects struct {
	mu      sync.Mutex
	f       *os.File // read handle, opened once the journal exists
	epoch   string
	scanned int64 // bytes of the journal read, its header included
	objs    map[Hash]rawObject
	order   []Hash             // objs in the order the records hold them: see snapshot
	refs    map[string]refMove // moved by the records read
	foreign bool               // another repository's: see readRecords
}

// refMove is what the journal's records did to one ref: the value it held
// before the first of them and the value the last gave it (ZeroHash: deleted).
type refMove struct {
	name     string
	old, new Hash
	gave     map[Hash]bool // every value the records gave it
}

// maxForeignJournal bounds what is read of another repository's journal; a
// memvault journal starts over every flushBytes.
const maxForeignJournal = 4 * flushBytes

// get returns the object h if a record read so far holds it.
func (j *journalObjects) get(h Hash) (rawObject, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	o, ok := j.objs[h]
	return o, ok
}

// refresh reads what was appended to the journal at path since the last look,
// starting over when its epoch changed. It returns where the whole records end
// and the file's size: a writer cuts off anything between the two, the torn
// tail of a killed writer. end is 0 when the journal has no whole header yet
// (or no file).
func (j *journalObjects) refresh(path string) (end, size int64, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		f, err := openRegular(path)
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, nil
		}
		if err != nil {
			return 0, 0, err
		}
		j.f = f
	}
	var head [256]byte
	n, err := j.f.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return 0, 0, err
	}
	_, epoch, hn, ok, newer := parseJournalHeader(head[:n])
	if newer {
		return 0, 0, fmt.Errorf("the journal: %w", ErrNewerFormat)
	}
	if !ok {
		return 0, 0, nil // being written for the first time: nothing to read yet
	}
	if epoch != j.epoch || j.scanned < int64(hn) {
		j.reset(epoch, int64(hn))
	}
	fi, err := j.f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = fi.Size()
	if j.foreign && size > maxForeignJournal {
		return j.scanned, size, nil
	}
	if size > j.scanned {
		buf := make([]byte, size-j.scanned)
		n, err := j.f.ReadAt(buf, j.scanned)
		if err != nil && err != io.EOF {
			return 0, 0, err
		}
		recs, used, err := readRecords(buf[:n], j.foreign)
		for _, rec := range recs {
			j.add(rec)
		}
		if err != nil {
			return 0, 0, err
		}
		j.scanned += int64(used)
	}
	return j.scanned, size, nil
}

// appended records a record the writer appended between from and to, if the
// index had read up to from; otherwise the next refresh reads it.
func (j *journalObjects) appended(from, to int64, rec journalRecord) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.scanned != from {
		return
	}
	j.add(rec)
	j.scanned = to
}

func (j *journalObjects) add(rec journalRecord) {
	if j.objs == nil {
		j.objs = map[Hash]rawObject{}
		j.refs = map[string]refMove{}
	}
	m, ok := j.refs[rec.ref]
	if !ok {
		m = refMove{name: rec.ref, old: rec.old, gave: map[Hash]bool{}}
	}
	m.new = rec.new
	m.gave[rec.new] = true
	j.refs[rec.ref] = m
	for _, o := range rec.objs {
		if _, ok := j.objs[o.Hash]; !ok {
			j.order = append(j.order, o.Hash)
		}
		j.objs[o.Hash] = o
	}
}

// moves returns the ref moves of the records read.
func (j *journalObjects) moves() []refMove {
	j.mu.Lock()
	defer j.mu.Unlock()
	ms := make([]refMove, 0, len(j.refs))
	for _, m := range j.refs {
		ms = append(ms, m)
	}
	return ms
}

// ref returns the value the records read gave ref, if any moved it.
func (j *journalObjects) ref(name string) (Hash, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	m, ok := j.refs[name]
	return m.new, ok
}

func (j *journalObjects) reset(epoch string, scanned int64) {
	j.epoch, j.scanned, j.objs, j.order, j.refs = epoch, scanned, nil, nil, nil
}

// restarted records that the writer emptied the journal under the header head.
func (j *journalObjects) restarted(head []byte) {
	_, epoch, n, _, _ := parseJournalHeader(head)
	j.mu.Lock()
	j.reset(epoch, int64(n))
	j.mu.Unlock()
}

// snapshot returns the objects and ref moves of the records read, the objects
// in the order the records hold them (commit by commit, so that a pack keeps
// the versions of a folder in the order they were made, which the search for
// deltas takes for their likeness), the moves sorted by name; empty when there
// are none.
func (j *journalObjects) snapshot() (objs []rawObject, moves []refMove, empty bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.refs) == 0 {
		return nil, nil, true
	}
	objs = make([]rawObject, 0, len(j.objs))
	for _, h := range j.order {
		objs = append(objs, j.objs[h])
	}
	for _, m := range j.refs {
		moves = append(moves, m)
	}
	sort.Slice(moves, func(a, b int) bool { return moves[a].name < moves[b].name })
	return objs, moves, false
}

// withPrefix lists the objects read whose names start with the bytes prefix.
func (j *journalObjects) withPrefix(prefix []byte) []Hash {
	j.mu.Lock()
	defer j.mu.Unlock()
	var hs []Hash
	for h := range j.objs {
		if bytes.HasPrefix(h[:], prefix) {
			hs = append(hs, h)
		}
	}
	return hs
}

// commits lists the commits read.
func (j *journalObjects) commits() []rawObject {
	j.mu.Lock()
	defer j.mu.Unlock()
	var cs []rawObject
	for _, o := range j.objs {
		if o.Type == plumbing.CommitObject {
			cs = append(cs, o)
		}
	}
	return cs
}

func (j *journalObjects) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

func memoryObject(o rawObject) plumbing.EncodedObject {
	mo := &plumbing.MemoryObject{}
	mo.SetType(o.Type)
	mo.Write(o.Data)
	return mo
}

// idleFlush is how long after its last commit a process flushes the journal, so
// that plain git finds every object while the process stays open.
const idleFlush = 2 * time.Second

// armIdleFlush (re)starts the wait for a pause in writing.
func (r *Repo) armIdleFlush() {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.closed {
		return
	}
	if r.flushTimer == nil {
		r.flushTimer = time.AfterFunc(idleFlush, r.flushIdle)
		return
	}
	r.flushTimer.Reset(idleFlush)
}

// flushIdle flushes the journal if no other writer holds the lock; a writer that
// does will arm the wait again.
func (r *Repo) flushIdle() {
	r.bgMu.Lock()
	if r.closed {
		r.bgMu.Unlock()
		return
	}
	r.background.Add(1)
	r.bgMu.Unlock()
	defer r.background.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	unlock, err := r.lock(ctx)
	if err != nil {
		return
	}
	defer unlock()
	r.flushJournal(context.Background(), true) // best effort: the journal keeps what it holds
}
