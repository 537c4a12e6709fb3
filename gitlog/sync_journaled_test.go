package gitlog

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

// TestJournaledFiles pins what a checkpoint makes durable where syncfs(2) is
// missing (macOS, the BSDs, Windows): every loose object and ref a commit put in
// place. It runs on Linux too, where syncFS does not use it, so the portable path
// is tested wherever the suite runs.
func TestJournaledFiles(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	commit(t, r, Change{Op: Put, Path: "b/c", Data: []byte("2")})

	files, dirs, err := journaledFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var loose []string
	filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && len(d.Name()) == 38 {
			loose = append(loose, p)
		}
		return nil
	})
	if len(loose) == 0 {
		t.Fatal("no loose objects after two commits")
	}
	for _, p := range append(loose, filepath.Join(dir, "refs", "heads", "main")) {
		if !slices.Contains(files, p) {
			t.Errorf("journaledFiles misses %s", p)
		}
		if !slices.Contains(dirs, filepath.Dir(p)) {
			t.Errorf("journaledFiles misses the folder of %s", p)
		}
	}
	if err := syncJournaled(dir); err != nil {
		t.Fatalf("syncJournaled: %v", err)
	}
	// Packed objects leave the journal naming files that are gone.
	if _, err := r.Pack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := syncJournaled(dir); err != nil {
		t.Errorf("syncJournaled after Pack: %v", err)
	}
}
