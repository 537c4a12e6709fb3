package journal

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/internal/object"
)

// TestForeignJournalChecked: no journal is trusted, since a vault folder may
// come from anywhere. A record whose object does not hash to its name, or
// claims more than zlib can hold, is read as the end of the records.
func TestForeignJournalChecked(t *testing.T) {
	blob := object.New(plumbing.BlobObject, []byte("hello"))
	good := Encode(Record{Ref: Branch, New: blob.Hash, Objects: []object.Object{blob}})
	lying := Encode(Record{Ref: Branch, New: blob.Hash, Objects: []object.Object{{Type: plumbing.BlobObject, Hash: blob.Hash, Data: []byte("forged")}}})
	for _, tc := range []struct {
		name      string
		rec       []byte
		maxObject int
		want      int
	}{
		{"own", good, 0, 1},
		{"foreign", good, 1 << 20, 1},
		{"foreign, forged", lying, 1 << 20, 0},
		{"own journal, forged (a vault folder from elsewhere)", lying, 0, 0},
	} {
		if recs, _, _ := ReadRecords(tc.rec, tc.maxObject); len(recs) != tc.want {
			t.Errorf("%s: %d records, want %d", tc.name, len(recs), tc.want)
		}
	}
	// A size no zlib stream of this length can hold: not even allocated.
	huge := bytes.Clone(good)
	off := 12 + 2 + len(Branch) + 40 + 4 + 20 + 1 // the object's size field
	binary.BigEndian.PutUint32(huge[off:], 1<<31)
	binary.BigEndian.PutUint32(huge[8:], crc32.Checksum(huge[12:], crc32.MakeTable(crc32.Castagnoli)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, _, _ := ReadRecords(huge, 0)
	runtime.ReadMemStats(&after)
	if len(recs) != 0 || after.TotalAlloc-before.TotalAlloc > 1<<20 {
		t.Errorf("a record claiming a 2 GiB object from %d bytes of zlib: %d records, %d bytes allocated", len(good), len(recs), after.TotalAlloc-before.TotalAlloc)
	}
}

// TestJournalRefNameChecked: a record's ref name becomes a path when the
// ref's file is written; one that is not a ref name ends the records.
func TestJournalRefNameChecked(t *testing.T) {
	blob := object.New(plumbing.BlobObject, []byte("x"))
	for _, name := range []string{"refs/heads/../../../escape", "/etc/passwd", "HEAD", "refs/heads/main.lock"} {
		rec := Encode(Record{Ref: name, New: blob.Hash, Objects: []object.Object{blob}})
		if recs, _, _ := ReadRecords(rec, 0); len(recs) != 0 {
			t.Errorf("a record naming %q was read", name)
		}
	}
	rec := Encode(Record{Ref: Branch, New: blob.Hash, Objects: []object.Object{blob}})
	if recs, _, _ := ReadRecords(rec, 0); len(recs) != 1 {
		t.Errorf("a record naming %s was not read", Branch)
	}
}

// FuzzJournal: whatever a vault folder holds as its journal, reading it
// returns whole records or an error, never a panic, and every record it takes
// is framed again to the same bytes it was read from.
func FuzzJournal(f *testing.F) {
	blob := object.New(plumbing.BlobObject, []byte("a file"))
	rec := Encode(Record{Ref: Branch, New: blob.Hash, Objects: []object.Object{blob}})
	f.Add(append(Header(), rec...))
	f.Add(append([]byte("memvault journal v1\nboot x\n"), rec...))
	f.Add(append(Header(), rec[:len(rec)-3]...))
	f.Add([]byte("memvault journal v3\nboot x\nepoch y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, epoch, n, ok, _ := ParseHeader(data)
		if !ok {
			return
		}
		recs, used, _ := ReadRecords(data[n:], 0)
		if used > len(data)-n {
			t.Fatalf("readRecords used %d of %d bytes", used, len(data)-n)
		}
		if epoch == "" {
			return // version 1: its records are not written again
		}
		var again []byte
		for _, r := range recs {
			again = append(again, Encode(r)...)
		}
		if !bytes.Equal(again, data[n:n+used]) {
			t.Fatalf("the %d records read frame again to other bytes", len(recs))
		}
	})
}
