package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if err := WriteFile(p, []byte("one"), 0o600, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteFile over a file without replace = %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "one" {
		t.Errorf("the file without replace holds %q, want one", got)
	}
	if err := WriteFile(p, []byte("three"), 0o600, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "three" {
		t.Errorf("the file after replace holds %q, want three", got)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode: %v, %v; want 0600", fi.Mode(), err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("the folder holds %d files, want the one: a temporary file was left", len(names))
	}
}
