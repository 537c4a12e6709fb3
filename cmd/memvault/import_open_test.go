//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadImportFileRefusesSwapped: what the listing said was a regular file
// may have been swapped, by the time import opens it, for a symbolic link
// (which once imported its target), a FIFO (which blocked the import past
// SIGTERM) or a sparse file (a megabyte of NULs on a few bytes of disk). Each
// is built for real and handed to the opener, which must refuse it by what it
// opened, at once.
func TestReadImportFileRefusesSwapped(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("the target's contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sparse := filepath.Join(dir, "sparse.md")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.md")
	if err := os.WriteFile(plain, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path, reason string
		max          int64
	}{
		{link, "a symbolic link", 1 << 20},
		{fifo, "not a regular file", 1 << 20},
		{sparse, "not text (it holds NUL bytes)", 1 << 20},
		{big, "2000 bytes, over the file size limit of 1000", 1000},
		{plain, "", 1 << 20},
	} {
		type result struct {
			data   []byte
			reason string
		}
		done := make(chan result, 1)
		go func() {
			data, reason := readImportFile(tc.path, tc.max)
			done <- result{data, reason}
		}()
		select {
		case r := <-done:
			if r.reason != tc.reason || tc.reason != "" && r.data != nil {
				t.Errorf("readImportFile(%s) = %q, %q; want reason %q and no data", filepath.Base(tc.path), r.data, r.reason, tc.reason)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("readImportFile(%s) still blocked after 10 s", filepath.Base(tc.path))
		}
	}
}
