package vaulttest_test

import (
	"bytes"
	"compress/zlib"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault/vaulttest"
)

// TestFindInFiles shows that the scan sees a needle stored raw and one inside a zlib
// stream that starts in the middle of a file, as gitlog's journal holds objects.
func TestFindInFiles(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 20\x00needle in a haystack"))
	zw.Close()
	files := map[string][]byte{
		"raw":      []byte("some needle here"),
		"embedded": append([]byte("journal header\x00\x01\x02"), z.Bytes()...),
		"clean":    []byte("nothing to see"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := vaulttest.FindInFiles(t, dir, []byte("needle"))
	want := []string{filepath.Join(dir, "embedded") + " (decompressed)", filepath.Join(dir, "raw")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FindInFiles = %q, want %q", got, want)
	}
}
