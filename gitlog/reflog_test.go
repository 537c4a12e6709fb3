package gitlog

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/internal/record"
)

// reflogV1Line is a line of a reflog of version 1, as the older build wrote it.
func reflogV1Line(m RefMove) string {
	body := fmt.Sprintf("%s %s %d", m.Old, m.New, m.When.UnixNano())
	return fmt.Sprintf("%s %08x\n", body, crc32.Checksum([]byte(body), crc32.MakeTable(crc32.Castagnoli)))
}

// The reflog is checked: a record torn at the end by a crash is left out, a
// damaged record followed by whole ones is reported, and a later version's
// reflog is refused and never written to.
func TestRefLogChecked(t *testing.T) {
	a, b := Hash{1}, Hash{2}
	when := time.Unix(1_800_000_000, 5)
	good := reflogFormat.Encode()
	good = record.Frame(good, tagRefMove, reflogRecord(RefMove{Old: ZeroHash, New: a, When: when}).Body)
	good = record.Frame(good, tagRefMove, reflogRecord(RefMove{Old: a, New: b, When: when.Add(time.Second)}).Body)
	moves, err := parseRefLog(good)
	if err != nil || len(moves) != 2 || moves[1].New != b || !moves[1].When.Equal(when.Add(time.Second)) {
		t.Fatalf("parseRefLog(good) = %+v, %v", moves, err)
	}
	if moves, err := parseRefLog(append(bytes.Clone(good), "MVRL\x00\x00\x00\x30torn"...)); err != nil || len(moves) != 2 {
		t.Errorf("parseRefLog(torn tail) = %+v, %v; want the two whole records", moves, err)
	}
	if moves, err := parseRefLog(append(bytes.Clone(good), make([]byte, 60)...)); err != nil || len(moves) != 2 {
		t.Errorf("parseRefLog(zeros after a power loss) = %+v, %v; want the two whole records", moves, err)
	}
	flipped := bytes.Clone(good)
	flipped[len(reflogFormat.Encode())+12+21] ^= 1 // in the first record's new commit
	if _, err := parseRefLog(flipped); !errors.Is(err, errDamagedFile) {
		t.Errorf("parseRefLog(a changed record) = %v, want errDamagedFile", err)
	}
	if _, err := parseRefLog([]byte("memvault reflog v9\n")); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("parseRefLog(v9) = %v, want ErrNewerFormat", err)
	}
	unknown := record.Frame(bytes.Clone(good), "MVZZ", []byte("a record of a kind to come"))
	if _, err := parseRefLog(unknown); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("parseRefLog(a record of an unknown kind) = %v, want ErrNewerFormat", err)
	}

	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetClock(func() time.Time { return when })
	r.recordMove(Branch, ZeroHash, a, time.Time{})
	r.recordMove("refs/remotes/origin/main", ZeroHash, b, time.Time{}) // only main is recorded
	if moves, err := r.RefLog(); err != nil || len(moves) != 1 || moves[0].New != a || !moves[0].When.Equal(when) {
		t.Errorf("RefLog = %+v, %v; want the one move of main", moves, err)
	}
	for _, newer := range [][]byte{[]byte("memvault reflog v9\nwhatever\n"), unknown} {
		if err := os.WriteFile(r.reflogPath(), newer, 0o600); err != nil {
			t.Fatal(err)
		}
		r.recordMove(Branch, a, b, time.Time{})
		if got, _ := os.ReadFile(r.reflogPath()); !bytes.Equal(got, newer) {
			t.Errorf("a later version's reflog was written to: %q", got)
		}
	}
}

// A reflog of version 1, a text line a move, is read as it is, and written
// again as version 2, moves kept, before the next move is added; one that does
// not check is left as it is.
func TestRefLogVersion1(t *testing.T) {
	a, b, c := Hash{1}, Hash{2}, Hash{3}
	when := time.Unix(1_800_000_000, 5)
	v1 := "memvault reflog v1\n" + reflogV1Line(RefMove{Old: ZeroHash, New: a, When: when}) + reflogV1Line(RefMove{Old: a, New: b, When: when.Add(time.Second)})
	if moves, err := parseRefLog([]byte(v1 + "0000 torn")); err != nil || len(moves) != 2 || moves[1].New != b {
		t.Errorf("parseRefLog(v1, torn tail) = %+v, %v; want the two whole lines", moves, err)
	}
	flipped := strings.Replace(v1, b.String(), c.String(), 1)
	if _, err := parseRefLog([]byte(flipped)); !errors.Is(err, errDamagedFile) {
		t.Errorf("parseRefLog(v1, a changed line) = %v, want errDamagedFile", err)
	}

	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetClock(func() time.Time { return when.Add(time.Minute) })
	if err := os.WriteFile(r.reflogPath(), []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	r.recordMove(Branch, b, c, time.Time{})
	moves, err := r.RefLog()
	if err != nil || len(moves) != 3 || moves[0].New != a || moves[2].New != c || !moves[2].When.Equal(when.Add(time.Minute)) {
		t.Fatalf("RefLog after a move on a v1 reflog = %+v, %v; want its two moves and the new one", moves, err)
	}
	if data, _ := os.ReadFile(r.reflogPath()); !bytes.HasPrefix(data, reflogFormat.Encode()) {
		t.Errorf("the reflog after a move starts %q, want version 2", data[:min(len(data), 20)])
	}

	if err := os.WriteFile(r.reflogPath(), []byte(flipped), 0o600); err != nil {
		t.Fatal(err)
	}
	r.recordMove(Branch, c, a, time.Time{})
	if got, _ := os.ReadFile(r.reflogPath()); string(got) != flipped {
		t.Errorf("a damaged v1 reflog was written to: %q", got)
	}
}

// FuzzRefLog: whatever a vault folder holds as its reflog, reading it
// returns moves or an error, never a panic, and a reflog it reads whole is
// read the same after the moves are written again.
func FuzzRefLog(f *testing.F) {
	when := time.Unix(1_800_000_000, 5)
	good := record.Frame(reflogFormat.Encode(), tagRefMove, reflogRecord(RefMove{New: Hash{1}, When: when}).Body)
	f.Add(good)
	f.Add([]byte("memvault reflog v1\n" + reflogV1Line(RefMove{New: Hash{1}, When: when})))
	f.Add([]byte("memvault reflog v9\n"))
	f.Add(append(bytes.Clone(good), 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		moves, err := parseRefLog(data)
		if err != nil {
			return
		}
		again := reflogFormat.Encode()
		for _, m := range moves {
			again = record.Frame(again, tagRefMove, reflogRecord(m).Body)
		}
		moves2, err := parseRefLog(again)
		if err != nil || len(moves2) != len(moves) {
			t.Fatalf("the %d moves written again read as %d, %v", len(moves), len(moves2), err)
		}
		for i := range moves {
			if moves[i].Old != moves2[i].Old || moves[i].New != moves2[i].New || !moves[i].When.Equal(moves2[i].When) {
				t.Fatalf("move %d: %+v written again reads %+v", i, moves[i], moves2[i])
			}
		}
	})
}

// Two processes' writers append to one reflog, each reading what the other
// appended since its last look; a torn record one of them left is cut off
// before the other appends, and every acknowledged move is there, in order.
func TestRefLogTwoWriters(t *testing.T) {
	dir := t.TempDir()
	a, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var want []Hash
	for i, r := range []*Repo{a, b, a, b} {
		want = append(want, commit(t, r, Change{Op: Put, Path: "f", Data: []byte{byte(i)}}))
		if i == 1 {
			f, err := os.OpenFile(a.reflogPath(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("MVRL\x00\x00\x00\x30torn")) // a writer killed mid-record
			f.Close()
		}
	}
	moves, err := a.RefLog()
	if err != nil || len(moves) != len(want) {
		t.Fatalf("RefLog = %d moves, %v; want %d", len(moves), err, len(want))
	}
	for i, m := range moves {
		if m.New != want[i] {
			t.Errorf("move %d is to %s, want %s", i, m.New, want[i])
		}
	}
}
