package source

import (
	"bytes"
	"compress/zlib"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestSourceLooseBlobBomb: a loose blob whose header says 5 bytes and whose
// zlib stream inflates to far more (64 MiB here, 2 GiB in the wild, where it
// took 5.4 GB) is read no further than its header says.
func TestSourceLooseBlobBomb(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command(gittest.Git(t), "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	h := plumbing.ComputeHash(plumbing.BlobObject, []byte("hello"))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 5\x00hello"))
	zeros := make([]byte, 1<<20)
	for range 64 {
		zw.Write(zeros)
	}
	zw.Close()
	p := filepath.Join(dir, "objects", h.String()[:2], h.String()[2:])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := src.ReadFile(File{Path: "bomb.md", Hash: hashOf(h), Size: 5}, 1<<20)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "inflates past the 5 bytes its header gives") {
		t.Errorf("ReadFile of a loose blob that inflates past its header = %q, %v; want refused", data, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("ReadFile of a 5-byte loose blob allocated %d MiB, want at most 8", n>>20)
	}
}

// TestSourceRefusesGitdirFile: a folder whose .git is a file ("gitdir: ...")
// names another repository; import reads only the one it was given.
func TestSourceRefusesGitdirFile(t *testing.T) {
	other := t.TempDir()
	if out, err := exec.Command(gittest.Git(t), "init", "-q", "--bare", other).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+other+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "gitdir:") {
		t.Errorf("OpenSource of a folder whose .git names %s = %v, want refused", other, err)
	}
}
