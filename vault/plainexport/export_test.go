package plainexport_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/plainexport"
	"github.com/memvault/memvault/vault/vaulttest"
)

var ctx = context.Background()

// snapshot is a vault holding files, path to content.
func snapshot(t *testing.T, files map[string]string) *vault.Snapshot {
	t.Helper()
	v := vaulttest.New(t)
	err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		for p, c := range files {
			if err := tx.WriteFile(ctx, p, []byte(c)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// record is a Sink that notes each call.
type record struct {
	calls  []string
	closed bool
}

func (r *record) Dir(rel string) error { r.calls = append(r.calls, "dir "+rel); return nil }
func (r *record) File(rel string, data []byte) error {
	r.calls = append(r.calls, "file "+rel+" "+string(data))
	return nil
}
func (r *record) Close() error { r.closed = true; return nil }

func TestWrite(t *testing.T) {
	snap := snapshot(t, map[string]string{
		"/memories/a.md":            "a",
		"/memories/notes/b.md":      "b",
		"/memories/notes/deep/c.md": "c",
		"/memories/other/d.md":      "d",
	})
	for _, tc := range []struct {
		from string
		want []string
	}{
		{"", []string{"dir memories", "file memories/a.md a", "dir memories/notes", "file memories/notes/b.md b",
			"dir memories/notes/deep", "file memories/notes/deep/c.md c", "dir memories/other", "file memories/other/d.md d"}},
		{"/memories/notes", []string{"file b.md b", "dir deep", "file deep/c.md c"}},
	} {
		t.Run("from="+tc.from, func(t *testing.T) {
			files, bad, err := plainexport.Files(ctx, snap, tc.from)
			if err != nil || len(bad) > 0 {
				t.Fatalf("Files(%q) = %q, %v, %v", tc.from, files, bad, err)
			}
			var r record
			unread, err := plainexport.Write(ctx, snap, files, tc.from, &r)
			if err != nil || len(unread) > 0 {
				t.Fatalf("Write(%q) = %v, %v", tc.from, unread, err)
			}
			if got, want := strings.Join(r.calls, "\n"), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("Write(%q) made\n%s\nwant\n%s", tc.from, got, want)
			}
			if r.closed {
				t.Errorf("Write(%q) closed the sink, which is its caller's", tc.from)
			}
		})
	}
}

// A path the memory tool refuses stops the export before anything of it
// leaves: a crafted tree could name one.
func TestWriteRefusesBadPath(t *testing.T) {
	snap := snapshot(t, map[string]string{"/memories/a.md": "a"})
	var r record
	for _, p := range []string{"/memories/../etc/passwd", "/memories//a.md", "/etc/passwd"} {
		if _, err := plainexport.Write(ctx, snap, []string{p}, "", &r); err == nil || !strings.Contains(err.Error(), "not a valid memory path") {
			t.Errorf("Write(%q) = %v, want a refusal of the path", p, err)
		}
	}
	if len(r.calls) > 0 {
		t.Errorf("the sink got %q, want nothing", r.calls)
	}
}

func TestDirSink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	s, err := plainexport.NewDirSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Dir("memories"); err != nil {
		t.Fatal(err)
	}
	if err := s.File("memories/a.md", []byte("alpha")); err != nil {
		t.Fatal(err)
	}
	if err := s.File("memories/a.md", []byte("again")); err == nil {
		t.Error("File(memories/a.md) twice: no error, want the second refused")
	}
	if err := s.File("../outside.md", []byte("x")); err == nil {
		t.Error("File(../outside.md): no error, want a name outside the folder refused")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memories", "a.md")); err != nil || string(b) != "alpha" {
		t.Errorf("ReadFile(memories/a.md) = %q, %v, want alpha", b, err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "memories"): 0o700, filepath.Join(dir, "memories", "a.md"): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("Stat(%s) = %v, %v, want mode %v", p, fi.Mode().Perm(), err, want)
		}
	}
	if _, err := plainexport.NewDirSink(dir); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("NewDirSink(a folder with files) = %v, want it refused", err)
	}
	empty := t.TempDir()
	if s, err := plainexport.NewDirSink(empty); err != nil {
		t.Errorf("NewDirSink(an empty folder) = %v", err)
	} else {
		s.Close()
	}
}

func TestTarSink(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := plainexport.NewTarSink(&buf, now)
	if err := s.Dir("memories"); err != nil {
		t.Fatal(err)
	}
	if err := s.File("memories/a.md", []byte("alpha")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&buf)
	var got []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if !h.ModTime.Equal(now) {
			t.Errorf("%s dated %v, want %v", h.Name, h.ModTime, now)
		}
		got = append(got, h.Name+" "+os.FileMode(h.Mode).String()+" "+string(b))
	}
	want := []string{"memories/ -rwx------ ", "memories/a.md -rw------- alpha"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the tar stream holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
