//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// TestImportFolderSwapRaced: a folder of the source swapped for a symbolic
// link to a folder outside it, again and again while import walks the
// source, is never followed. filepath.WalkDir read a subfolder, and opened
// the files in it, by their paths, and imported files from outside the
// source whenever the link was in place at that moment.
func TestImportFolderSwapRaced(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	src := filepath.Join(dir, "src")
	sub := filepath.Join(src, "sub")
	for _, d := range []string{outside, sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%02d.md", i)), []byte(filepath.Base(d)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(src, "top.md"), []byte("top\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var swaps int
	stopped := make(chan struct{})
	t.Cleanup(func() { cancel(); <-stopped }) // before the folder is removed
	go func() {
		defer close(stopped)
		n := 0
		defer func() { swaps = n }()
		real := sub + ".real"
		for ctx.Err() == nil {
			if os.Rename(sub, real) != nil || os.Symlink(outside, sub) != nil {
				t.Error("cannot swap the folder for a link")
				return
			}
			n++
			if os.Remove(sub) != nil || os.Rename(real, sub) != nil {
				t.Error("cannot put the folder back")
				return
			}
		}
	}()
	limits := vault.Limits{MaxFileSize: 1 << 20, MaxFiles: 10_000}
	walks := 0
	for end := time.Now().Add(time.Second); time.Now().Before(end); walks++ {
		files, _, err := readFolder(ctx, src, vault.Root, limits)
		if err != nil {
			t.Fatalf("readFolder: %v", err)
		}
		for _, f := range files {
			if strings.Contains(string(f.Data), "outside") {
				t.Fatalf("walk %d imported %s with the content of a file outside the source", walks, f.Path)
			}
		}
	}
	cancel()
	<-stopped
	if swaps < walks {
		t.Logf("only %d swaps in %d walks", swaps, walks)
	}
}
