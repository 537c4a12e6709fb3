package gitlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/gitlog/internal/record"
)

// The reflog is this repository's own record of when its main branch moved,
// as git's reflog is: "as it was an hour ago" is answered from it, never from
// commit dates, which whoever makes a commit writes (a collaborator's commit
// dated 2001 would otherwise be what main "was" at any time since). Each move
// of Branch, a commit, a fast-forward, a merge, a repair, appends one record
// to memvault/reflog: the old and the new commit and the local time. It is
// only appended to. It is not synced on its own: a crash may lose the last
// records (and a time answer then reaches back to the move before), never a
// move, which the journal holds. A record torn by a crash at the end is left
// out; damage followed by whole records is reported, never guessed around.
//
// Version 1 was a text line a move, with a CRC-32C of the line; it is still
// read, and written again as version 2 before the first record is added.

const reflogName = "reflog"

// reflogFormat is the reflog as a record file: a record (MVRL) is the old
// and the new commit and the time in nanoseconds since 1970, big-endian.
var reflogFormat = record.Format{
	Kind:    "reflog",
	Version: 2,
	Fields:  map[int][]string{1: nil, 2: nil},
	Tags:    []string{tagRefMove},
	MaxBody: 48,
}

const tagRefMove = "MVRL"

// skipReflog turns the record off: only BenchmarkCommitReflog sets it, to
// measure what the record costs a commit, old and new in one run.
var skipReflog atomic.Bool

// RefMove is one move of the main branch recorded in the reflog.
type RefMove struct {
	Old, New Hash // ZeroHash for Old: the branch was made
	When     time.Time
}

func (r *Repo) reflogPath() string { return filepath.Join(r.dir, stateDir, reflogName) }

// SetClock sets what the reflog takes the time from (time.Now by default).
func (r *Repo) SetClock(now func() time.Time) {
	if now != nil {
		r.now = now
	}
}

func (r *Repo) clock() time.Time {
	if r.now == nil {
		return time.Now()
	}
	return r.now()
}

func reflogRecord(m RefMove) record.Record {
	body := make([]byte, 0, 48)
	body = append(body, m.Old[:]...)
	body = append(body, m.New[:]...)
	body = binary.BigEndian.AppendUint64(body, uint64(m.When.UnixNano()))
	return record.Record{Tag: tagRefMove, Body: body}
}

// recordMove appends the move of ref from old to new, made at when (zero:
// the clock's now), to the reflog, when ref is the main branch. A commit made
// here gives its committer time, which this process set a moment ago: one
// reading of the clock a move. The move is already durable: a reflog that cannot be
// written costs one time answer, not the move, so its error is not the
// caller's. The caller holds the lock.
func (r *Repo) recordMove(ref string, old, new Hash, when time.Time) {
	if ref != Branch || old == new || skipReflog.Load() {
		return
	}
	f, whole, ok := r.openRefLog()
	if !ok {
		return // a later version's, or damaged: never written to
	}
	if when.IsZero() {
		when = r.clock()
	}
	whole, err := record.Append(r.disk, f, whole, []record.Record{reflogRecord(RefMove{Old: old, New: new, When: when})}, false)
	if err != nil {
		r.closeRefLog()
		return
	}
	r.reflog.whole = whole
}

// reflogFile is the reflog held open by the writer, with where its whole
// records end as last read: a commit reads only what other processes
// appended since, not the whole history's moves.
type reflogFile struct {
	f     *os.File
	whole int64
}

// openRefLog returns the reflog open for appending, and where its whole
// records end; false when it must not be written (a later version's, or
// damaged). It reads what other processes appended since the last look,
// and opens the file again when another process replaced it. The caller
// holds the lock.
func (r *Repo) openRefLog() (*os.File, int64, bool) {
	lf := &r.reflog
	if lf.f != nil {
		fi, err := lf.f.Stat()
		now, nerr := os.Stat(r.reflogPath())
		head := reflogFormat.Encode()
		got := make([]byte, len(head))
		n, _ := lf.f.ReadAt(got, 0)
		if err != nil || nerr != nil || !os.SameFile(fi, now) || !bytes.Equal(got[:n], head) {
			r.closeRefLog() // replaced, or written over: read it whole again
		} else if fi.Size() < lf.whole {
			r.closeRefLog() // cut by someone else: read it whole again
		} else if fi.Size() > lf.whole {
			buf := make([]byte, fi.Size()-lf.whole)
			n, _ := lf.f.ReadAt(buf, lf.whole)
			_, used, err := reflogFormat.ParseRecords(buf[:n])
			switch {
			case err != nil:
				r.closeRefLog()
			case used < n && reflogFormat.Damaged(buf[used+1:n]):
				r.closeRefLog()
				return nil, 0, false // reported by RefLog, never cut off
			default:
				lf.whole += int64(used)
			}
		}
	}
	if lf.f == nil {
		f, file, err := reflogFormat.Open(r.disk, r.reflogPath(), nil, false)
		if err != nil {
			return nil, 0, false
		}
		if file.Damaged {
			f.Close()
			return nil, 0, false
		}
		if file.Version == 1 {
			// Written again in this version, whole and synced, before
			// anything is added; a v1 reflog that does not check is left
			// as it is.
			f.Close()
			if err := r.convertRefLog(); err != nil {
				return nil, 0, false
			}
			if f, file, err = reflogFormat.Open(r.disk, r.reflogPath(), nil, false); err != nil || file.Version != reflogFormat.Version || file.Damaged {
				if f != nil {
					f.Close()
				}
				return nil, 0, false
			}
		}
		lf.f, lf.whole = f, int64(file.Whole)
	}
	return lf.f, lf.whole, true
}

func (r *Repo) closeRefLog() {
	if r.reflog.f != nil {
		r.reflog.f.Close()
	}
	r.reflog = reflogFile{}
}

// convertRefLog writes a reflog of version 1 again in version 2.
func (r *Repo) convertRefLog() error {
	data, err := os.ReadFile(r.reflogPath())
	if err != nil {
		return err
	}
	moves, err := parseRefLog(data)
	if err != nil {
		return err
	}
	recs := make([]record.Record, len(moves))
	for i, m := range moves {
		recs[i] = reflogRecord(m)
	}
	return reflogFormat.Replace(r.disk, r.reflogPath(), nil, recs, true)
}

// RefLog returns the recorded moves of the main branch, oldest first. A
// repository whose moves were never recorded (made before the reflog) has
// none. The error wraps ErrNewerFormat for a reflog of a later version; a
// record that does not check, with whole records after it, is an error too.
func (r *Repo) RefLog() ([]RefMove, error) {
	data, err := os.ReadFile(r.reflogPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitlog: reflog: %w", err)
	}
	return parseRefLog(data)
}

func parseRefLog(data []byte) ([]RefMove, error) {
	file, err := reflogFormat.Parse(data)
	switch {
	case errors.Is(err, record.ErrNotRecordFile):
		return nil, fmt.Errorf("gitlog: reflog: not a reflog: %w", errDamagedFile)
	case err != nil:
		return nil, fmt.Errorf("gitlog: reflog: %w", err)
	case file.Whole == 0:
		return nil, nil // torn as it was made
	case file.Version == 1:
		return parseRefLogV1(data[file.Len:])
	case file.Damaged:
		return nil, fmt.Errorf("gitlog: reflog record %d does not check: %w", len(file.Records)+1, errDamagedFile)
	}
	out := make([]RefMove, 0, len(file.Records))
	for i, rec := range file.Records {
		if len(rec.Body) != 48 {
			return nil, fmt.Errorf("gitlog: reflog record %d does not check: %w", i+1, errDamagedFile)
		}
		var m RefMove
		copy(m.Old[:], rec.Body)
		copy(m.New[:], rec.Body[20:])
		m.When = time.Unix(0, int64(binary.BigEndian.Uint64(rec.Body[40:])))
		out = append(out, m)
	}
	return out, nil
}

// parseRefLogV1 reads the lines of a reflog of version 1: old, new, time in
// nanoseconds, and the CRC-32C of the rest of the line in hex.
func parseRefLogV1(data []byte) ([]RefMove, error) {
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // a line torn at the end by a crash
	}
	var out []RefMove
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 2; sc.Scan(); n++ {
		m, ok := parseRefLogLine(sc.Text())
		if !ok {
			return nil, fmt.Errorf("gitlog: reflog line %d does not check: %w", n, errDamagedFile)
		}
		out = append(out, m)
	}
	return out, nil
}

func parseRefLogLine(line string) (RefMove, bool) {
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return RefMove{}, false
	}
	body, sum := line[:i], line[i+1:]
	want, err := strconv.ParseUint(sum, 16, 32)
	if err != nil || len(sum) != 8 || uint32(want) != crc32.Checksum([]byte(body), castagnoli) {
		return RefMove{}, false
	}
	f := strings.Fields(body)
	if len(f) != 3 {
		return RefMove{}, false
	}
	old, err1 := ParseHash(f[0])
	new, err2 := ParseHash(f[1])
	ns, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return RefMove{}, false
	}
	return RefMove{Old: old, New: new, When: time.Unix(0, ns)}, true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
