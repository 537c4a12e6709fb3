// Package record frames the files memvault keeps beside git's: the journal,
// the reflog and the history index of gitlog, and vault's views and
// re-encryption progress. Each is one record file, and this package is the one
// way they are read and written.
//
// A record file is a header, then records:
//
//	memvault <kind> v<version>\n        the header line
//	<field> <value>\n                   the header fields of that version, in order
//	tag (4 bytes), length (4), CRC-32C (4), body   one record; big-endian
//
// What it promises:
//
//   - A version or a record tag this build does not know is a newer
//     memvault's: reading stops there with an error wrapping ErrNewerFormat,
//     and a writer must neither append to nor rewrite such a file.
//   - A record is taken only whole and matching its checksum. Reading stops
//     at the first that is not (the torn tail of a write cut off by a crash,
//     never acknowledged), and says where the whole records end, so that a
//     writer cuts the tail off before it appends.
//   - Nothing is allocated for a length before it is checked against the
//     bytes there and the format's bound.
//
// Writes go through the file layer (package disk), which the crash explorer
// drives: Create and Replace put a whole file in place by rename, Append adds
// records to an open file.
package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"

	"github.com/memvault/memvault/gitlog/internal/disk"
)

// ErrNewerFormat marks a file, or a record in it, of a version this build does
// not know.
var ErrNewerFormat = errors.New("written by a newer version of memvault: upgrade memvault to change this vault")

// ErrNotRecordFile marks a file that does not start with its kind's header:
// damaged, or not memvault's.
var ErrNotRecordFile = errors.New("not a memvault record file of this kind")

// frameLen is the bytes before a record's body: tag, length, checksum.
const frameLen = 12

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Format is one kind of record file, as this build knows it.
type Format struct {
	Kind    string           // in the header line
	Version int              // the version written
	Fields  map[int][]string // the header fields of each version read, Version's included; a version not here is not read
	Tags    []string         // the record tags read, 4 bytes each
	MaxBody int              // a longer record is damage; 0: 1 GiB

	// Headless reads a file that does not start with a header as one of
	// version 0 whose records start at once (the history index, before it
	// had a header). Version 0 must then be in Fields.
	Headless bool
	// SkipDamage, for a cache, steps over damage and over records of tags it
	// does not know, to the next record that checks, instead of stopping.
	SkipDamage bool
}

// Record is one record: its tag and its body.
type Record struct {
	Tag  string
	Body []byte
}

// Header is what a file's header says.
type Header struct {
	Version int
	Fields  []string // the values, in the order Format.Fields names them
	Len     int      // bytes of the header
}

func (f *Format) family() string { return "memvault " + f.Kind + " v" }

// Encode returns the header of a file of version f.Version with the given
// field values, in the order f.Fields names them.
func (f *Format) Encode(values ...string) []byte {
	b := []byte(f.family() + strconv.Itoa(f.Version) + "\n")
	for i, name := range f.Fields[f.Version] {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		b = append(b, name+" "+v+"\n"...)
	}
	return b
}

// ParseHeader reads the header at the start of data. ok is false when data
// holds no whole header yet: a file being made (or cut off as it was), which
// reads as empty. The error wraps ErrNewerFormat for a version f does not read
// (an older one no longer read counts too: it is not this build's to change)
// and ErrNotRecordFile for anything that is no header of this kind.
func (f *Format) ParseHeader(data []byte) (h Header, ok bool, err error) {
	fam := f.family()
	if !bytes.HasPrefix(data, []byte(fam)) {
		switch {
		case len(data) < len(fam) && bytes.HasPrefix([]byte(fam), data):
			return Header{}, false, nil
		case f.Headless:
			return Header{Version: 0}, true, nil
		}
		return Header{}, false, fmt.Errorf("%s: %w", f.Kind, ErrNotRecordFile)
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		if len(data) > len(fam)+10 {
			return Header{}, false, fmt.Errorf("%s: %w", f.Kind, ErrNotRecordFile)
		}
		return Header{}, false, nil
	}
	v, err := strconv.Atoi(string(data[len(fam):nl]))
	if err != nil || v < 0 {
		return Header{}, false, fmt.Errorf("%s: %w", f.Kind, ErrNotRecordFile)
	}
	names, known := f.Fields[v]
	if !known {
		return Header{}, false, fmt.Errorf("%s, version %d: %w", f.Kind, v, ErrNewerFormat)
	}
	h = Header{Version: v, Len: nl + 1}
	for _, name := range names {
		rest := data[h.Len:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			if len(rest) > 4096 {
				return Header{}, false, fmt.Errorf("%s: %w", f.Kind, ErrNotRecordFile)
			}
			return Header{}, false, nil // still being written
		}
		value, ok := bytes.CutPrefix(rest[:nl], []byte(name+" "))
		if !ok {
			return Header{}, false, fmt.Errorf("%s: field %s: %w", f.Kind, name, ErrNotRecordFile)
		}
		h.Fields = append(h.Fields, string(value))
		h.Len += nl + 1
	}
	return h, true, nil
}

// Frame appends to dst the record of tag (4 bytes) and body.
func Frame(dst []byte, tag string, body []byte) []byte {
	var head [frameLen]byte
	copy(head[:4], tag)
	binary.BigEndian.PutUint32(head[4:], uint32(len(body)))
	binary.BigEndian.PutUint32(head[8:], crc32.Checksum(body, castagnoli))
	dst = append(dst, head[:]...)
	return append(dst, body...)
}

// FrameLen is how many bytes Frame adds for a body of n bytes.
func FrameLen(n int) int { return frameLen + n }

func (f *Format) knows(tag []byte) bool {
	for _, t := range f.Tags {
		if string(tag) == t {
			return true
		}
	}
	return false
}

func (f *Format) maxBody() int {
	if f.MaxBody > 0 {
		return f.MaxBody
	}
	return 1 << 30
}

// ParseRecords reads the records at the start of data (which follows a
// header) and returns them, their bodies sharing data, with how many bytes of
// data they take: what follows is a torn tail, or damage. A whole record that
// checks but carries a tag f does not know ends them with an error wrapping
// ErrNewerFormat. With f.SkipDamage, damage and unknown tags are stepped over
// instead, and used is where the last whole record ends.
func (f *Format) ParseRecords(data []byte) (recs []Record, used int, err error) {
	off := 0
	for len(data)-off >= frameLen {
		d := data[off:]
		n := binary.BigEndian.Uint32(d[4:])
		fits := uint64(n) <= uint64(len(d)-frameLen) && uint64(n) <= uint64(f.maxBody())
		if !fits || crc32.Checksum(d[frameLen:frameLen+int(n)], castagnoli) != binary.BigEndian.Uint32(d[8:]) {
			if !f.SkipDamage {
				break
			}
			off = f.resync(data, off+1)
			continue
		}
		end := off + frameLen + int(n)
		if !f.knows(d[:4]) {
			if !f.SkipDamage && !isTag(d[:4]) {
				break // not a tag at all: damage, or zeros a crash left
			}
			if !f.SkipDamage {
				return recs, used, fmt.Errorf("%s: a record of kind %q: %w", f.Kind, d[:4], ErrNewerFormat)
			}
		} else {
			recs = append(recs, Record{Tag: string(d[:4]), Body: data[off+frameLen : end : end]})
		}
		off, used = end, end
	}
	return recs, used, nil
}

// isTag tells whether b may be a record's tag: four capital letters. Anything
// else where a tag should be is damage, never a newer memvault's record.
func isTag(b []byte) bool {
	for _, c := range b {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return len(b) == 4
}

// wholeAfter tells whether a whole record of a known tag that checks starts
// somewhere in data.
func (f *Format) wholeAfter(data []byte) bool {
	for off := f.resync(data, 0); off < len(data); off = f.resync(data, off+1) {
		d := data[off:]
		if len(d) < frameLen {
			return false
		}
		n := binary.BigEndian.Uint32(d[4:])
		if uint64(n) <= uint64(len(d)-frameLen) && uint64(n) <= uint64(f.maxBody()) &&
			crc32.Checksum(d[frameLen:frameLen+int(n)], castagnoli) == binary.BigEndian.Uint32(d[8:]) {
			return true
		}
	}
	return false
}

// Damaged tells whether rest, what follows the whole records read, holds a
// whole record of a known tag that checks: records were lost in the middle,
// and rest is no torn tail.
func (f *Format) Damaged(rest []byte) bool { return f.wholeAfter(rest) }

// resync finds the next place at or after from where a record of a known tag
// may start.
func (f *Format) resync(data []byte, from int) int {
	next := len(data)
	for _, t := range f.Tags {
		if i := bytes.Index(data[from:], []byte(t)); i >= 0 && from+i < next {
			next = from + i
		}
	}
	return next
}

// File is a whole record file as read.
type File struct {
	Header
	Records []Record
	// Whole is where the header and the whole records end; 0 when the file
	// holds no whole header.
	Whole int
	// Damaged is set when what follows the whole records is not a torn
	// tail: a whole record that checks comes after it, so records were lost
	// in the middle.
	Damaged bool
}

// Parse reads a whole file: its header and records. A file with no whole
// header reads as empty (Whole 0). The errors are ParseHeader's and
// ParseRecords'; with ErrNewerFormat from a record, the records before it are
// returned too.
func (f *Format) Parse(data []byte) (File, error) {
	h, ok, err := f.ParseHeader(data)
	if err != nil || !ok {
		return File{}, err
	}
	rest := data[h.Len:]
	recs, used, err := f.ParseRecords(rest)
	file := File{Header: h, Records: recs, Whole: h.Len + used}
	if err == nil && used < len(rest) && !f.SkipDamage {
		file.Damaged = f.wholeAfter(rest[used+1:])
	}
	return file, err
}

// Read reads the file at path (see Parse); a missing file reads as empty.
func (f *Format) Read(path string) (File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return File{}, nil
	}
	if err != nil {
		return File{}, err
	}
	return f.Parse(data)
}

// Replace writes a file of version f.Version holding the header fields and
// recs at path, in place of whatever was there, by rename: a reader sees the
// old file or the new one, never a part. With durable, the file and its folder
// are synced first.
func (f *Format) Replace(d *disk.Disk, path string, fields []string, recs []Record, durable bool) error {
	data := f.Encode(fields...)
	for _, r := range recs {
		data = Frame(data, r.Tag, r.Body)
	}
	return d.WriteFileAtomic(path, data, 0o600, durable)
}

// Append appends recs to the open file fl whose whole records end at whole,
// cutting off what follows them first (a torn tail: a record appended after
// it could not be read), and syncs its data when sync is set. It returns where
// the whole records now end.
func Append(d *disk.Disk, fl *os.File, whole int64, recs []Record, sync bool) (int64, error) {
	fi, err := fl.Stat()
	if err != nil {
		return whole, err
	}
	if fi.Size() > whole {
		if err := d.Truncate(fl, whole); err != nil {
			return whole, err
		}
	}
	var data []byte
	for _, r := range recs {
		data = Frame(data, r.Tag, r.Body)
	}
	if _, err := fl.Seek(whole, 0); err != nil {
		return whole, err
	}
	if _, err := d.Write(fl, data); err != nil {
		return whole, err
	}
	if sync {
		if err := d.Datasync(fl); err != nil {
			return whole, err
		}
	}
	return whole + int64(len(data)), nil
}

// Open opens the record file at path for appending: it makes it, with the
// header of f.Version and fields, when there is none (durably when durable is
// set), and reads it. What it holds may be of another version f reads: the
// caller converts it (Replace) before it appends.
func (f *Format) Open(d *disk.Disk, path string, fields []string, durable bool) (*os.File, File, error) {
	for range 2 {
		fl, err := d.OpenFile(path, os.O_RDWR, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			if err := f.Replace(d, path, fields, nil, durable); err != nil {
				return nil, File{}, err
			}
			fl, err = d.OpenFile(path, os.O_RDWR, 0o600)
		}
		if err != nil {
			return nil, File{}, err
		}
		file, err := readOpen(f, fl)
		if err != nil {
			fl.Close()
			return nil, File{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		if file.Whole > 0 || f.Headless {
			return fl, file, nil
		}
		// No whole header: Replace puts a file in place whole, so this one
		// was cut short by hand or by another program. Start it over.
		fl.Close()
		if err := f.Replace(d, path, fields, nil, durable); err != nil {
			return nil, File{}, err
		}
	}
	return nil, File{}, fmt.Errorf("%s: %w", filepath.Base(path), ErrNotRecordFile)
}

func readOpen(f *Format, fl *os.File) (File, error) {
	fi, err := fl.Stat()
	if err != nil {
		return File{}, err
	}
	data := make([]byte, fi.Size())
	if n, err := fl.ReadAt(data, 0); err != nil && n != len(data) {
		return File{}, err
	}
	return f.Parse(data)
}
