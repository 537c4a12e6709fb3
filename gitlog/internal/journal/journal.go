// Package journal is the journal's format and its readers: how a commit is
// made durable with one append and one sync, and no new file.
//
// A commit appends every object it made and the ref's old and new values to
// memvault/journal as one record and syncs that one file: then it is
// acknowledged. The objects are not written as loose files (creating a file
// costs more than the sync), and the ref's file is not moved: memvault's
// readers, in every process, take objects and refs from the journal first
// (Index). gitlog's flush later writes the journal's objects as one pack,
// moves the ref files, and starts the journal over (Restart) under a new
// epoch.
//
// What it promises: a record is read only whole and checked (its checksum,
// and every object hashing to its name); a torn tail, the write of a process
// killed before its commit was acknowledged, is cut off before the next
// append; a header or record kind this build does not know is a newer
// memvault's, and is never truncated or written over (record.ErrNewerFormat).
// The journal is framed by gitlog's record files (package record): version 2
// is written, with the boot it was written in and an epoch; version 1 is
// still read.
package journal

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"

	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/object"
	"github.com/memvault/memvault/gitlog/internal/record"
)

// Name is the journal's file name in the repository's local state folder.
const Name = "journal"

// FlushBytes is the journal's size past which the writer flushes it.
const FlushBytes = 4 << 20

// Branch is the ref a version 1 record of kind MVJR moved.
const Branch = "refs/heads/main"

const (
	// The record kinds: MVJR (v1) moved Branch, its objects as loose files'
	// bytes; MVJF (v1) moved the ref it names, likewise; MVJO (v2) moves the
	// ref it names, its objects as type, size and zlib of their data.
	tagV1Branch = "MVJR"
	tagV1Ref    = "MVJF"
	tagObjects  = "MVJO"
)

// format is the journal as a record file: version 2 is written, with the boot
// it was written in and an epoch that changes each time the journal starts
// over, so a reader in another process knows that what it read of the journal
// before is gone; version 1, which had no epoch, is still read.
var format = record.Format{
	Kind:    "journal",
	Version: 2,
	Fields:  map[int][]string{1: {"boot"}, 2: {"boot", "epoch"}},
	Tags:    []string{tagV1Branch, tagV1Ref, tagObjects},
}

// Record is one move of a ref with the objects it needs.
type Record struct {
	Ref      string
	Old, New object.Hash // Zero for New: the ref was deleted
	Objects  []object.Object
}

// Header starts a journal under a new epoch.
func Header() []byte {
	var e [8]byte
	rand.Read(e[:])
	return format.Encode(disk.BootID(), hex.EncodeToString(e[:]))
}

// ParseHeader reads a header of either version: the boot, the epoch (none in
// v1) and the header's length. ok is false for a header cut short (a writer
// killed as it started the journal) and for anything that is not a journal;
// newer is set for the header of a version this build does not know.
func ParseHeader(data []byte) (boot, epoch string, n int, ok, newer bool) {
	h, ok, err := format.ParseHeader(data)
	if err != nil || !ok {
		return "", "", 0, false, errors.Is(err, record.ErrNewerFormat)
	}
	if h.Version == 2 {
		epoch = h.Fields[1]
	}
	return h.Fields[0], epoch, h.Len, true, false
}

// Encode frames one record, as Append writes it.
func Encode(rec Record) []byte {
	var p bytes.Buffer
	binary.Write(&p, binary.BigEndian, uint16(len(rec.Ref)))
	p.WriteString(string(rec.Ref))
	p.Write(rec.Old[:])
	p.Write(rec.New[:])
	binary.Write(&p, binary.BigEndian, uint32(len(rec.Objects)))
	// Every object is stored, not deflated: a blob is an age ciphertext,
	// which deflate cannot shrink (see object.Stored), and the journal is
	// read only to replay it: a flush packs its objects from memory, and
	// deflates the commits and trees then, off the write's path. Deflating a tree here cost each write more than the
	// rest of its hashing and framing, and most in a sealed vault, whose
	// names are longer and compress less.
	w := object.Stored.Get().(*zlib.Writer)
	var z bytes.Buffer
	for _, o := range rec.Objects {
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
	object.Stored.Put(w)
	return record.Frame(make([]byte, 0, record.FrameLen(p.Len())), tagObjects, p.Bytes())
}

// Read returns the journal's boot id and its whole records; a torn or
// corrupt tail (a commit that was never acknowledged) ends the list. The error
// wraps record.ErrNewerFormat for a journal or record of a newer memvault.
func Read(data []byte) (boot string, recs []Record, err error) {
	boot, _, n, ok, newer := ParseHeader(data)
	if newer {
		return "", nil, fmt.Errorf("the journal: %w", record.ErrNewerFormat)
	}
	if !ok {
		return "", nil, nil
	}
	recs, _, err = ReadRecords(data[n:], 0)
	return boot, recs, err
}

// ReadRecords decodes the whole records at the start of data and returns them
// with the bytes they took. What follows the last whole record is a torn tail
// (a write cut off before it was acknowledged), except a whole, checksummed
// record of a kind this build does not know: that is a newer memvault's, and
// the error wraps ErrNewerFormat. Each object must hash to its name, or the
// records end there; with maxObject, each must also be at most that
// many bytes (another repository's journal, read for a local-path remote).
func ReadRecords(data []byte, maxObject int) (recs []Record, used int, err error) {
	framed, _, err := format.ParseRecords(data)
	for _, f := range framed {
		rec, ok := decodeRecord(f.Tag, f.Body, maxObject)
		if !ok {
			return recs, used, nil
		}
		recs = append(recs, rec)
		used += record.FrameLen(len(f.Body))
	}
	return recs, used, err
}

func decodeRecord(tag string, p []byte, maxObject int) (Record, bool) {
	rec := Record{Ref: Branch}
	if tag != tagV1Branch {
		if len(p) < 2 {
			return rec, false
		}
		n := int(binary.BigEndian.Uint16(p))
		if len(p) < 2+n {
			return rec, false
		}
		rec.Ref, p = string(p[2:2+n]), p[2+n:]
		// The name becomes a path when the ref's file is written: a damaged
		// or crafted record must not name a file outside refs/.
		name, ok := strings.CutPrefix(string(rec.Ref), "refs/")
		if !ok || object.CheckRefName(name) != "" {
			return rec, false
		}
	}
	if len(p) < 44 {
		return rec, false
	}
	copy(rec.Old[:], p)
	copy(rec.New[:], p[20:])
	n := binary.BigEndian.Uint32(p[40:])
	p = p[44:]
	for ; n > 0; n-- {
		var o object.Object
		var ok bool
		if tag == tagObjects {
			o, p, ok = decodeObject(p)
		} else {
			o, p, ok = decodeLoose(p)
		}
		// Every object must hash to its name, in any journal: a vault folder
		// may come from anywhere, and its journal is flushed into a pack when
		// it is opened.
		if !ok || maxObject > 0 && len(o.Data) > maxObject || object.Compute(o.Type, o.Data) != o.Hash {
			return rec, false
		}
		rec.Objects = append(rec.Objects, o)
	}
	return rec, len(p) == 0
}

// decodeObject decodes one object of a v2 record: hash, type, size, zlib length
// and zlib of the data.
func decodeObject(p []byte) (object.Object, []byte, bool) {
	var o object.Object
	if len(p) < 29 {
		return o, p, false
	}
	copy(o.Hash[:], p)
	o.Type = plumbing.ObjectType(p[20])
	size := binary.BigEndian.Uint32(p[21:])
	zlen := int(binary.BigEndian.Uint32(p[25:]))
	if len(p)-29 < zlen || int64(size) > object.MaxInflate(zlen) {
		return o, p, false
	}
	data, ok := object.InflateExactly(p[29:29+zlen], int(size))
	if !ok {
		return o, p, false
	}
	o.Data = data
	return o, p[29+zlen:], true
}

// decodeLoose decodes one object of a v1 record: hash, length and the bytes of
// its loose file, zlib("<type> <size>\0<data>").
func decodeLoose(p []byte) (object.Object, []byte, bool) {
	var o object.Object
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
	if err != nil || size < 0 || size > object.MaxInflate(l) {
		return o, p, false
	}
	o.Type, o.Data = t, make([]byte, size)
	if _, err := io.ReadFull(zr, o.Data); err != nil {
		return o, p, false
	}
	return o, p[24+l:], true
}

// Index indexes the objects of the journal's records, which are in no pack
// and no loose file until the journal is flushed. Each process reads what
// others appended when it looks for an object it does not find elsewhere
// (Refresh); the writer adds its own records as it appends them.
//
// Objects are named by their content, so whatever a whole, checksummed record
// held is right forever: an entry never goes stale, it is only dropped to bound
// memory when the journal starts over (a new epoch), once its objects are in a
// pack. Readers look in the journal before the packs, and after a miss read the
// journal again before they list the packs again: a flush installs the pack
// before it empties the journal, so an object is always in one or the other.
type Index struct {
	// MaxObject, when set, bounds each object of a record taken, and the
	// journal is read only up to 4 * FlushBytes: another repository's
	// journal, read for a local-path remote.
	MaxObject int

	mu      sync.Mutex
	f       *os.File // read handle, opened once the journal exists
	epoch   string
	scanned int64 // bytes of the journal read, its header included
	objs    map[object.Hash]object.Object
	order   []object.Hash   // objs in the order the records hold them: see Snapshot
	refs    map[string]Move // moved by the records read
}

// Move is what the journal's records did to one ref: the value it held
// before the first of them and the value the last gave it (Zero: deleted).
type Move struct {
	Name     string
	Old, New object.Hash
	Gave     map[object.Hash]bool // every value the records gave it
}

// Get returns the object h if a record read so far holds it.
func (j *Index) Get(h object.Hash) (object.Object, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	o, ok := j.objs[h]
	return o, ok
}

// Refresh reads what was appended to the journal at path since the last look,
// starting over when its epoch changed. It returns where the whole records end
// and the file's size: a writer cuts off anything between the two, the torn
// tail of a killed writer. end is 0 when the journal has no whole header yet
// (or no file).
func (j *Index) Refresh(path string) (end, size int64, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		f, err := disk.OpenRegular(path)
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
	_, epoch, hn, ok, newer := ParseHeader(head[:n])
	if newer {
		return 0, 0, fmt.Errorf("the journal: %w", record.ErrNewerFormat)
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
	if j.MaxObject > 0 && size > 4*FlushBytes {
		return j.scanned, size, nil
	}
	if size > j.scanned {
		buf := make([]byte, size-j.scanned)
		n, err := j.f.ReadAt(buf, j.scanned)
		if err != nil && err != io.EOF {
			return 0, 0, err
		}
		recs, used, err := ReadRecords(buf[:n], j.MaxObject)
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
// index had read up to from; otherwise the next Refresh reads it.
func (j *Index) appended(from, to int64, rec Record) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.scanned != from {
		return
	}
	j.add(rec)
	j.scanned = to
}

func (j *Index) add(rec Record) {
	if j.objs == nil {
		j.objs = map[object.Hash]object.Object{}
		j.refs = map[string]Move{}
	}
	m, ok := j.refs[rec.Ref]
	if !ok {
		m = Move{Name: rec.Ref, Old: rec.Old, Gave: map[object.Hash]bool{}}
	}
	m.New = rec.New
	m.Gave[rec.New] = true
	j.refs[rec.Ref] = m
	for _, o := range rec.Objects {
		if _, ok := j.objs[o.Hash]; !ok {
			j.order = append(j.order, o.Hash)
		}
		j.objs[o.Hash] = o
	}
}

// Moves returns the ref moves of the records read.
func (j *Index) Moves() []Move {
	j.mu.Lock()
	defer j.mu.Unlock()
	ms := make([]Move, 0, len(j.refs))
	for _, m := range j.refs {
		ms = append(ms, m)
	}
	return ms
}

// Ref returns the value the records read gave ref, if any moved it.
func (j *Index) Ref(name string) (object.Hash, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	m, ok := j.refs[name]
	return m.New, ok
}

func (j *Index) reset(epoch string, scanned int64) {
	j.epoch, j.scanned, j.objs, j.order, j.refs = epoch, scanned, nil, nil, nil
}

// restarted records that the writer emptied the journal under the header head.
func (j *Index) restarted(head []byte) {
	_, epoch, n, _, _ := ParseHeader(head)
	j.mu.Lock()
	j.reset(epoch, int64(n))
	j.mu.Unlock()
}

// Snapshot returns the objects and ref moves of the records read, the objects
// in the order the records hold them (commit by commit, so that a pack keeps
// the versions of a folder in the order they were made, which the search for
// deltas takes for their likeness), the moves sorted by name; empty when there
// are none.
func (j *Index) Snapshot() (objs []object.Object, moves []Move, empty bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.refs) == 0 {
		return nil, nil, true
	}
	objs = make([]object.Object, 0, len(j.objs))
	for _, h := range j.order {
		objs = append(objs, j.objs[h])
	}
	for _, m := range j.refs {
		moves = append(moves, m)
	}
	sort.Slice(moves, func(a, b int) bool { return moves[a].Name < moves[b].Name })
	return objs, moves, false
}

// WithPrefix lists the objects read whose names start with the bytes prefix.
func (j *Index) WithPrefix(prefix []byte) []object.Hash {
	j.mu.Lock()
	defer j.mu.Unlock()
	var hs []object.Hash
	for h := range j.objs {
		if bytes.HasPrefix(h[:], prefix) {
			hs = append(hs, h)
		}
	}
	return hs
}

// Commits lists the commits read.
func (j *Index) Commits() []object.Object {
	j.mu.Lock()
	defer j.mu.Unlock()
	var cs []object.Object
	for _, o := range j.objs {
		if o.Type == plumbing.CommitObject {
			cs = append(cs, o)
		}
	}
	return cs
}

// Close releases the read handle.
func (j *Index) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// File is the journal open for appending: the writer's, under the writer
// lock. It stays open: the journal is only ever truncated in place, never
// replaced, so every process's handle names the same file.
type File struct {
	d    *disk.Disk
	path string
	f    *os.File
}

// Open is the journal at path, written through d; the file is opened, and
// made, by the first Append or Restart.
func Open(d *disk.Disk, path string) *File { return &File{d: d, path: path} }

// Append appends rec, syncs it, adds its objects to idx (this journal's
// index), and returns the journal's new size. It reads first what other
// processes appended, and cuts off the torn tail a killed writer may have
// left (never acknowledged): a record appended after it could not be read.
func (j *File) Append(idx *Index, rec Record) (int64, error) {
	data := Encode(rec)
	if j.f == nil {
		f, err := j.d.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			if err := j.d.WriteFileAtomic(j.path, Header(), 0o600, true); err != nil {
				return 0, err
			}
			f, err = j.d.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0o600)
		}
		if err != nil {
			return 0, err
		}
		j.f = f
	}
	end, size, err := idx.Refresh(j.path)
	if err != nil {
		return 0, err
	}
	if end == 0 {
		// No whole header: a writer was killed as it started the journal over,
		// after it had packed everything the journal held. Start it over again,
		// or no reader could read the record appended here.
		if err := j.Restart(idx); err != nil {
			return 0, err
		}
		if end, size, err = idx.Refresh(j.path); err != nil {
			return 0, err
		}
	}
	if size > end {
		if err := j.d.Truncate(j.f, end); err != nil {
			return 0, err
		}
	}
	if _, err := j.d.Write(j.f, data); err != nil {
		return 0, err
	}
	if err := j.d.Datasync(j.f); err != nil {
		return 0, err
	}
	idx.appended(end, end+int64(len(data)), rec)
	return end + int64(len(data)), nil
}

// Restart empties the journal under a new epoch, once a flush has put what
// it held in a pack and moved the refs.
func (j *File) Restart(idx *Index) error {
	f := j.f
	if f == nil {
		var err error
		if f, err = j.d.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0o600); err != nil {
			return err
		}
		defer f.Close()
	}
	head := Header()
	if err := j.d.Truncate(f, 0); err != nil {
		return err
	}
	if _, err := j.d.Write(f, head); err != nil {
		return err
	}
	if err := j.d.Datasync(f); err != nil {
		return err
	}
	idx.restarted(head)
	return nil
}

// Close closes the file.
func (j *File) Close() {
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}
