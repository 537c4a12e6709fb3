package vault

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/gitlog"
)

func progressRepo(t *testing.T) *gitlog.Repo {
	t.Helper()
	r, err := gitlog.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestNewerProgressLeftAlone: a re-encryption's progress file of a newer
// memvault is refused, never started over: it may hold that version's work.
func TestNewerProgressLeftAlone(t *testing.T) {
	r := progressRepo(t)
	newer := []byte("memvault reencrypt v9 whatever it records\nand more\n")
	path := filepath.Join(r.StateDir(), "reencrypt")
	if err := os.WriteFile(path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openProgress(r, [32]byte{1}); !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("openProgress over a newer file = %v, want ErrNewerFormat", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, newer) {
		t.Fatalf("the newer progress file was rewritten: %q", got)
	}
}

// The progress of a run is taken by the next run to the same set, and
// dropped by a run to another; a second run at once is refused (ErrBusy).
func TestProgressResumes(t *testing.T) {
	r := progressRepo(t)
	set, other := [32]byte{1}, [32]byte{2}
	p, done, err := openProgress(r, set)
	if err != nil || len(done) != 0 {
		t.Fatalf("openProgress(new) = %v, %v", done, err)
	}
	if _, _, err := openProgress(r, set); !errors.Is(err, ErrBusy) {
		t.Errorf("a second openProgress while the first runs = %v, want ErrBusy", err)
	}
	p.add(gitlog.Hash{1}, []byte("ciphertext one"))
	p.add(gitlog.Hash{2}, []byte("ciphertext two"))
	p.close(false)
	p, done, err = openProgress(r, set)
	if err != nil || len(done) != 2 || string(done[gitlog.Hash{2}]) != "ciphertext two" {
		t.Fatalf("openProgress(same set) = %q, %v; want both ciphertexts", done, err)
	}
	p.close(false)
	p, done, err = openProgress(r, other)
	if err != nil || len(done) != 0 {
		t.Fatalf("openProgress(another set) = %q, %v; want nothing", done, err)
	}
	p.close(true)
	if _, err := os.Stat(filepath.Join(r.StateDir(), "reencrypt")); !os.IsNotExist(err) {
		t.Errorf("the progress file after a finished run: %v, want none", err)
	}
}

// progressV1File is a progress file of version 1, as the older build wrote it.
func progressV1File(target [32]byte, recs map[gitlog.Hash]string) []byte {
	data := []byte(progressV1 + hex.EncodeToString(target[:]) + "\n")
	for h, ct := range recs {
		rec := append(h[:], binary.BigEndian.AppendUint32(nil, uint32(len(ct)))...)
		rec = append(rec, ct...)
		data = append(data, binary.BigEndian.AppendUint32(rec, crc32.Checksum(rec, castagnoli))...)
	}
	return data
}

// A progress file of version 1 is resumed from, and written again in
// version 2.
func TestProgressVersion1(t *testing.T) {
	r := progressRepo(t)
	set := [32]byte{7}
	path := filepath.Join(r.StateDir(), "reencrypt")
	if err := os.WriteFile(path, progressV1File(set, map[gitlog.Hash]string{{1}: "ct one", {2}: "ct two"}), 0o600); err != nil {
		t.Fatal(err)
	}
	p, done, err := openProgress(r, set)
	if err != nil || len(done) != 2 || string(done[gitlog.Hash{1}]) != "ct one" {
		t.Fatalf("openProgress(v1) = %q, %v; want both ciphertexts", done, err)
	}
	p.close(false)
	if data, _ := os.ReadFile(path); !bytes.HasPrefix(data, []byte("memvault reencrypt v2\n")) {
		t.Errorf("the progress file after a run on a v1 file starts %q, want version 2", data[:min(len(data), 24)])
	}
	if _, done, err := openProgress(r, set); err != nil || len(done) != 2 {
		t.Errorf("openProgress after the conversion = %q, %v; want both ciphertexts", done, err)
	}
}

// FuzzProgress: whatever a vault folder holds as its progress file, a run
// reads ciphertexts from it or refuses it, never panics, and what it takes
// is taken again by the next run to the same set.
func FuzzProgress(f *testing.F) {
	set := [32]byte{7}
	f.Add(progressV1File(set, map[gitlog.Hash]string{{1}: "ct one"}))
	f.Add([]byte("memvault reencrypt v2\n"))
	f.Add([]byte("memvault reencrypt v9\n"))
	f.Add(append([]byte("memvault reencrypt v2\n"), "MVRE\x00\x00\x00\x40"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := progressRepo(t)
		if err := os.WriteFile(filepath.Join(r.StateDir(), "reencrypt"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		p, done, err := openProgress(r, set)
		if err != nil {
			return
		}
		p.close(false)
		_, again, err := openProgress(r, set)
		if err != nil || len(again) != len(done) {
			t.Fatalf("the next run takes %d ciphertexts, %v; want the %d the first took", len(again), err, len(done))
		}
		for h, ct := range done {
			if !bytes.Equal(again[h], ct) {
				t.Fatalf("ciphertext of %s: %q, then %q", h, ct, again[h])
			}
		}
	})
}
