package gitlog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The caller's record files: appended and read back in order, replaced
// whole, removed; damage stepped over; a file of another version or kind
// neither appended to nor replaced.
func TestRecordFiles(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := RecordFile{Name: "notes", Kind: "notes", Version: 2, Tag: "MVNT"}
	read := func() []string {
		t.Helper()
		recs, err := r.ReadRecords(f)
		if err != nil {
			t.Fatalf("ReadRecords: %v", err)
		}
		var out []string
		for _, b := range recs {
			out = append(out, string(b))
		}
		return out
	}
	if got := read(); got != nil {
		t.Errorf("ReadRecords(no file) = %q", got)
	}
	if err := r.AppendRecords(f, []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendRecords(f, []byte("c")); err != nil {
		t.Fatal(err)
	}
	if got := read(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("after two appends: %q", got)
	}
	path := filepath.Join(r.StateDir(), "notes")
	data, _ := os.ReadFile(path)
	damaged := append(bytes.Clone(data), "MVNT\x00\x00\x00\x05torn"...) // a torn append
	os.WriteFile(path, damaged, 0o600)
	if err := r.AppendRecords(f, []byte("d")); err != nil {
		t.Fatal(err)
	}
	if got := read(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("an append after a torn one: %q", got)
	}
	if err := r.ReplaceRecords(f, [][]byte{[]byte("only")}); err != nil {
		t.Fatal(err)
	}
	if got := read(); !slices.Equal(got, []string{"only"}) {
		t.Errorf("after ReplaceRecords: %q", got)
	}
	for _, empty := range [][]byte{nil, []byte("memvault no")} { // empty, or a header cut short
		os.WriteFile(path, empty, 0o600)
		if err := r.AppendRecords(f, []byte("again")); err != nil {
			t.Fatal(err)
		}
		if got := read(); !slices.Equal(got, []string{"again"}) {
			t.Errorf("an append to %q: %q", empty, got)
		}
	}
	if err := r.ReplaceRecords(f, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("ReplaceRecords(nil) left the file: %v", err)
	}

	// An older version of the format is the caller's to read and replace; a
	// newer one, or another kind, is left alone.
	os.WriteFile(path, []byte("memvault notes v1\nold lines\n"), 0o600)
	if err := r.ReplaceRecords(f, [][]byte{[]byte("converted")}); err != nil {
		t.Errorf("ReplaceRecords over version 1: %v", err)
	}
	for _, newer := range []string{"memvault notes v3\nwhatever\n", "memvault other v1\n"} {
		os.WriteFile(path, []byte(newer), 0o600)
		if _, err := r.ReadRecords(f); !errors.Is(err, ErrNewerFormat) {
			t.Errorf("ReadRecords(%q) = %v, want ErrNewerFormat", newer, err)
		}
		if err := r.AppendRecords(f, []byte("x")); !errors.Is(err, ErrNewerFormat) {
			t.Errorf("AppendRecords(%q) = %v, want ErrNewerFormat", newer, err)
		}
		if got, _ := os.ReadFile(path); string(got) != newer {
			t.Errorf("AppendRecords changed %q to %q", newer, got)
		}
	}
	os.WriteFile(path, []byte("memvault notes v3\n"), 0o600)
	if err := r.ReplaceRecords(f, [][]byte{[]byte("x")}); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("ReplaceRecords over version 3 = %v, want ErrNewerFormat", err)
	}
	for _, bad := range []string{"", "../escape", "a/b", "."} {
		if err := r.AppendRecords(RecordFile{Name: bad, Kind: "x", Version: 1, Tag: "MVXX"}); err == nil {
			t.Errorf("AppendRecords to %q: no error", bad)
		}
	}
}

// TryLock: one holder at a time; the lock goes with unlock.
func TestTryLock(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	unlock, ok, err := r.TryLock("work.lock")
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if _, ok, err := r.TryLock("work.lock"); err != nil || ok {
		t.Errorf("TryLock while held = %v, %v; want not ok", ok, err)
	}
	unlock()
	if unlock, ok, err := r.TryLock("work.lock"); err != nil || !ok {
		t.Errorf("TryLock after unlock = %v, %v", ok, err)
	} else {
		unlock()
	}
	if _, _, err := r.TryLock("lock"); err == nil {
		t.Errorf("TryLock(the writers' lock): no error")
	}
}
