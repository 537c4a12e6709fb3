package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportWithABadEntry: one entry put into the vault's tree by hand with
// git (in a sealed vault, a name stored in the clear, which does not open
// under the vault's key; in a plain one, a damaged age file) once made
// `export` fail whole, in either format, to a folder or as a tar stream, so
// nothing of the memory could be taken out. Export writes every file that
// reads, says on stderr, once, which entry it left out, and exits 1 so that a
// script does not take the partial export for a whole one.
func TestExportWithABadEntry(t *testing.T) {
	for _, c := range badEntryFormats {
		t.Run(c.format, func(t *testing.T) {
			cli := badEntryVault(t, c.init, "m-bad.md",
				`{"command":"create","path":"/memories/a.md","file_text":"alpha\n"}`,
				`{"command":"create","path":"/memories/z/z.md","file_text":"zeta\n"}`)
			incomplete := "memvault: export: incomplete: 1 entry is no memory file memvault can read, not exported:\n" +
				"memvault:   /memories/m-bad.md  " + c.reason + "\n"
			want := map[string]string{"memories/a.md": "alpha\n", "memories/z/z.md": "zeta\n"}

			dir := filepath.Join(t.TempDir(), "out")
			out, code, stderr := cli("", "export", dir)
			if code != exitAnswer || out != "" || !strings.HasSuffix(stderr, incomplete) {
				t.Errorf("export DIR = %q (status %d), stderr %q\nwant status 1 and stderr ending %q", out, code, stderr, incomplete)
			}
			if n := strings.Count(stderr, "memvault:   "); n != 1 {
				t.Errorf("export DIR: stderr names %d entries, want 1:\n%s", n, stderr)
			}
			got := map[string]string{}
			err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				got[filepath.ToSlash(rel)] = string(b)
				return err
			})
			if err != nil || !maps.Equal(got, want) {
				t.Errorf("export DIR wrote %v (%v), want %v", got, err, want)
			}

			out, code, stderr = cli("", "export", "-")
			if code != exitAnswer || !strings.HasSuffix(stderr, incomplete) {
				t.Errorf("export - = status %d, stderr %q\nwant status 1 and stderr ending %q", code, stderr, incomplete)
			}
			got, err = untar(out)
			if err != nil || !maps.Equal(got, want) {
				t.Errorf("export - wrote %v (%v), want %v, a whole tar stream", got, err, want)
			}

			// --from leaves out only the bad entries under its folder.
			dir = filepath.Join(t.TempDir(), "z")
			out, code, stderr = cli("", "export", dir, "--from", "/memories/z")
			if code != exitOK || strings.Contains(stderr, "m-bad") {
				t.Errorf("export DIR --from /memories/z = %q (status %d), stderr %q\nwant status 0 and no bad entry", out, code, stderr)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "z.md")); err != nil || string(b) != "zeta\n" {
				t.Errorf("export DIR --from /memories/z: z.md = %q (%v), want %q", b, err, "zeta\n")
			}
		})
	}
}

// untar reads the regular files of a tar stream, which must end as tar ends one.
func untar(s string) (map[string]string, error) {
	files := map[string]string{}
	tr := tar.NewReader(strings.NewReader(s))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, tr); err != nil {
			return files, err
		}
		files[h.Name] = b.String()
	}
}
