package vaulttest

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// FindInRepo looks for needle everywhere under dir: in every file as stored, in
// every zlib stream a file holds (loose objects), and in every object of the git
// repository at dir, loose or packed, decompressed. It returns where it was found.
func FindInRepo(tb testing.TB, dir string, needle []byte) []string {
	tb.Helper()
	return append(FindInFiles(tb, dir, needle), FindInObjects(tb, dir, needle)...)
}

// FindInObjects reads every object of the git repository at dir, loose and
// packed, decompressed and with deltas applied, and says which hold needle. git
// itself reads them (cat-file --batch-all-objects), not memvault's reader: a
// reader that missed an object would hide it. A repository with no objects fails
// tb: the scan would prove nothing.
func FindInObjects(tb testing.TB, dir string, needle []byte) []string {
	tb.Helper()
	cmd := exec.Command(gittest.Git(tb), "--git-dir", dir, "cat-file", "--batch-all-objects", "--batch", "--unordered")
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("read objects of %s: %v", dir, err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("read objects of %s: %v", dir, err)
	}
	var found []string
	n := 0
	r := bufio.NewReader(out)
	for {
		// Each object: "<name> <type> <size>\n", its bytes, "\n".
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			break
		}
		f := strings.Fields(line)
		if err != nil || len(f) != 3 {
			tb.Fatalf("read objects of %s: header %q: %v", dir, line, err)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			tb.Fatalf("read objects of %s: header %q: %v", dir, line, err)
		}
		b := make([]byte, size+1)
		if _, err := io.ReadFull(r, b); err != nil {
			tb.Fatalf("read objects of %s: object %s: %v", dir, f[0], err)
		}
		n++
		if bytes.Contains(b[:size], needle) {
			found = append(found, f[1]+" "+f[0])
		}
	}
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("read objects of %s: %v: %s", dir, err, stderr.Bytes())
	}
	if n == 0 {
		tb.Fatalf("no objects in %s: the scan would prove nothing", dir)
	}
	return found
}

// FindInFiles looks for needle in every regular file under dir except those
// named in skip: in its bytes, and in every zlib stream that starts anywhere in
// it (loose objects, and the objects gitlog's journal holds back to back).
func FindInFiles(tb testing.TB, dir string, needle []byte, skip ...string) []string {
	tb.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || slices.Contains(skip, p) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			found = append(found, p)
		}
		if zlibContains(b, needle) {
			found = append(found, p+" (decompressed)")
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("scan %s: %v", dir, err)
	}
	return found
}

// zlibContains reports whether a zlib stream starting at any offset of b inflates to
// something holding needle.
func zlibContains(b, needle []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0x78 || (uint(b[i])<<8|uint(b[i+1]))%31 != 0 {
			continue // not a zlib header
		}
		zr, err := zlib.NewReader(bytes.NewReader(b[i:]))
		if err != nil {
			continue
		}
		plain, _ := io.ReadAll(io.LimitReader(zr, 64<<20)) // a truncated stream still counts
		if bytes.Contains(plain, needle) {
			return true
		}
	}
	return false
}
