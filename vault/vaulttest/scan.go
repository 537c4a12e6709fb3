package vaulttest

import (
	"bytes"
	"compress/zlib"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// FindInRepo looks for needle everywhere under dir: in every file as stored, in
// every zlib stream a file holds (loose objects), and in every object of the git
// repository at dir, loose or packed, decompressed. It returns where it was found.
func FindInRepo(tb testing.TB, dir string, needle []byte) []string {
	tb.Helper()
	return append(FindInFiles(tb, dir, needle), FindInObjects(tb, dir, needle)...)
}

// FindInObjects reads every object of the git repository at dir, loose and
// packed, decompressed and with deltas applied, and says which hold needle. A
// repository with no objects fails tb: the scan would prove nothing.
func FindInObjects(tb testing.TB, dir string, needle []byte) []string {
	tb.Helper()
	var found []string
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	iter, err := st.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		tb.Fatalf("iterate objects of %s: %v", dir, err)
	}
	n := 0
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		n++
		r, err := o.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			found = append(found, o.Type().String()+" "+o.Hash().String())
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("read objects of %s: %v", dir, err)
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
