package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memvault/memvault/gitlog/internal/record"
)

// RecordFile names one of the caller's own files in the repository's local
// state folder (memvault/, never synced), framed as gitlog frames its own: a
// header naming Kind and Version, then records, each with its length and a
// checksum. Records are only appended, unsynced, and a record that does not
// check (the torn tail of a crash, or damage) is stepped over: such a file
// holds what may be lost, never what must not be.
type RecordFile struct {
	Name    string // the file's name in the local state folder
	Kind    string // a word, in the header
	Version int    // the version written and read
	Tag     string // every record's tag: four capital letters
}

func (f RecordFile) format() (record.Format, error) {
	if f.Name == "" || strings.ContainsAny(f.Name, `/\`) || f.Name == "." || f.Name == ".." {
		return record.Format{}, fmt.Errorf("gitlog: record file %q: not a file name", f.Name)
	}
	return record.Format{
		Kind:       f.Kind,
		Version:    f.Version,
		Fields:     map[int][]string{f.Version: nil},
		Tags:       []string{f.Tag},
		SkipDamage: true,
	}, nil
}

func (r *Repo) recordPath(f RecordFile) string { return filepath.Join(r.dir, stateDir, f.Name) }

// ReadRecords returns the bodies of the records of the file f names, in the
// order they were appended: none when there is no file. The error wraps
// ErrNewerFormat for a file of another version or kind, which the caller must
// neither append to nor replace (it reads an older version of its own format
// itself, and converts it with ReplaceRecords).
func (r *Repo) ReadRecords(f RecordFile) ([][]byte, error) {
	fm, err := f.format()
	if err != nil {
		return nil, err
	}
	file, err := fm.Read(r.recordPath(f))
	if errors.Is(err, record.ErrNotRecordFile) {
		err = fmt.Errorf("%w: %w", err, ErrNewerFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("gitlog: read %s: %w", f.Name, err)
	}
	out := make([][]byte, len(file.Records))
	for i, rec := range file.Records {
		out[i] = rec.Body
	}
	return out, nil
}

// AppendRecords appends recs to the file f names, making it when there is
// none, in one write that is not synced: a crash may lose it. Appends from
// several processes never interleave within a record. The error wraps
// ErrNewerFormat when the file is of another version or kind (see
// ReadRecords), which is left as it is, and ErrReadOnly in a read-only
// repository.
func (r *Repo) AppendRecords(f RecordFile, recs ...[]byte) error {
	fm, err := f.format()
	if err != nil {
		return err
	}
	if r.readOnly {
		return fmt.Errorf("gitlog: append to %s: %w", f.Name, ErrReadOnly)
	}
	var data []byte
	for _, b := range recs {
		data = record.Frame(data, f.Tag, b)
	}
	p := r.recordPath(f)
	made := false
	fl, err := r.disk.OpenFile(p, os.O_RDWR|os.O_APPEND, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if fl, err = r.disk.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			made = true
			data = append(fm.Encode(), data...)
		} else if errors.Is(err, os.ErrExist) {
			fl, err = r.disk.OpenFile(p, os.O_RDWR|os.O_APPEND, 0o600) // another process made it meanwhile
		}
	}
	if err == nil && !made {
		var whole bool
		if whole, err = checkRecordHeader(fm, fl); err == nil && !whole {
			// Empty, or a header cut short as it was made: nothing to keep.
			if err = r.disk.Truncate(fl, 0); err == nil {
				data = append(fm.Encode(), data...)
			}
		}
		if err != nil {
			fl.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("gitlog: append to %s: %w", f.Name, err)
	}
	_, err = r.disk.Write(fl, data)
	if cerr := fl.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("gitlog: append to %s: %w", f.Name, err)
	}
	return nil
}

// checkRecordHeader reads the header of the open file fl, which must be fm's
// version; whole is false when the file holds no whole header (it is empty,
// or was cut short as it was made: a file AppendRecords makes gets its header
// and first records in one write).
func checkRecordHeader(fm record.Format, fl *os.File) (whole bool, err error) {
	var head [256]byte
	n, err := fl.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return false, err
	}
	_, whole, err = fm.ParseHeader(head[:n])
	if errors.Is(err, record.ErrNotRecordFile) {
		err = fmt.Errorf("%w: %w", err, ErrNewerFormat)
	}
	return whole, err
}

// ReplaceRecords writes the file f names again holding recs, in version
// f.Version, durably and whole: a crash leaves the old file or the new one.
// With no recs the file is removed. It replaces a file of an older version,
// or of no version at all (the caller has read what it keeps), and refuses,
// with an error wrapping ErrNewerFormat, one of a newer version.
func (r *Repo) ReplaceRecords(f RecordFile, recs [][]byte) error {
	fm, err := f.format()
	if err != nil {
		return err
	}
	if r.readOnly {
		return fmt.Errorf("gitlog: write %s: %w", f.Name, ErrReadOnly)
	}
	p := r.recordPath(f)
	if err := refuseNewer(fm, p); err != nil {
		return fmt.Errorf("gitlog: write %s: %w", f.Name, err)
	}
	if len(recs) == 0 {
		if err := r.disk.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("gitlog: remove %s: %w", f.Name, err)
		}
		return nil
	}
	framed := make([]record.Record, len(recs))
	for i, b := range recs {
		framed[i] = record.Record{Tag: f.Tag, Body: b}
	}
	if err := fm.Replace(r.disk, p, nil, framed, true); err != nil {
		return fmt.Errorf("gitlog: write %s: %w", f.Name, err)
	}
	return nil
}

// refuseNewer refuses the file at p when it is of fm's kind and a version
// above fm's.
func refuseNewer(fm record.Format, p string) error {
	fl, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer fl.Close()
	var head [256]byte
	n, _ := fl.ReadAt(head[:], 0)
	older := fm
	older.Fields = map[int][]string{}
	for v := range fm.Version + 1 {
		older.Fields[v] = nil
	}
	if _, _, err := older.ParseHeader(head[:n]); errors.Is(err, record.ErrNewerFormat) {
		return err
	}
	return nil
}

// TryLock takes the lock file name in the local state folder, for the
// caller's own long work that must run alone (not the writers' lock, see
// Lock), without waiting: ok is false while another process or goroutine
// holds it. unlock lets it go.
func (r *Repo) TryLock(name string) (unlock func(), ok bool, err error) {
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." || name == "lock" {
		return nil, false, fmt.Errorf("gitlog: lock %q: not a lock's name", name)
	}
	return r.packLock(context.Background(), name, false)
}
