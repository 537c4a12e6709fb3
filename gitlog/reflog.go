package gitlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The reflog is this repository's own record of when its main branch moved,
// as git's reflog is: "as it was an hour ago" is answered from it, never from
// commit dates, which whoever makes a commit writes (a collaborator's commit
// dated 2001 would otherwise be what main "was" at any time since). Each move
// of Branch, a commit, a fast-forward, a merge, a repair, appends one line to
// memvault/reflog with the local time, the old and the new commit, and a
// checksum of the line. It is only appended to. It is not synced on its own:
// a crash may lose the last lines (and a time answer then reaches back to the
// move before), never a move, which the journal holds. A line torn by a
// crash at the end is left out; any other line that does not check is
// damage, reported, never guessed around.

const (
	reflogName   = "reflog"
	reflogMagic  = "memvault reflog v1\n"
	reflogFamily = "memvault reflog v"
)

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

func reflogLine(m RefMove) string {
	body := fmt.Sprintf("%s %s %d", m.Old, m.New, m.When.UnixNano())
	return fmt.Sprintf("%s %08x\n", body, crc32.Checksum([]byte(body), crcTable))
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
	p := r.reflogPath()
	f, err := r.disk.OpenFile(p, os.O_RDWR|os.O_APPEND, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err := r.disk.WriteFileAtomic(p, []byte(reflogMagic), 0o600, false); err != nil {
			return
		}
		f, err = r.disk.OpenFile(p, os.O_RDWR|os.O_APPEND, 0o600)
	}
	if err != nil {
		return
	}
	defer f.Close()
	var head [len(reflogMagic)]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || string(head[:]) != reflogMagic {
		return // a later version's, or damaged: never written to
	}
	if when.IsZero() {
		when = r.clock()
	}
	r.disk.Write(f, []byte(reflogLine(RefMove{Old: old, New: new, When: when})))
}

// RefLog returns the recorded moves of the main branch, oldest first. A
// repository whose moves were never recorded (made before the reflog) has
// none. The error wraps ErrNewerFormat for a reflog of a later version, and
// ErrDamagedFile for a line that does not check.
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
	if !bytes.HasPrefix(data, []byte(reflogMagic)) {
		if bytes.HasPrefix(data, []byte(reflogFamily)) {
			return nil, fmt.Errorf("gitlog: reflog: %w", ErrNewerFormat)
		}
		if len(data) < len(reflogMagic) && bytes.HasPrefix([]byte(reflogMagic), data) {
			return nil, nil // torn as it was made
		}
		return nil, fmt.Errorf("gitlog: reflog: not a reflog: %w", ErrDamagedFile)
	}
	data = data[len(reflogMagic):]
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1] // a line torn at the end by a crash
	}
	var out []RefMove
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 2; sc.Scan(); n++ {
		m, ok := parseRefLogLine(sc.Text())
		if !ok {
			return nil, fmt.Errorf("gitlog: reflog line %d does not check: %w", n, ErrDamagedFile)
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
	if err != nil || len(sum) != 8 || uint32(want) != crc32.Checksum([]byte(body), crcTable) {
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
