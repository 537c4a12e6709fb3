package vault

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A views file of version 1 or 2 is read, and written again in version 3 by
// the next view: its times kept, and in a sealed vault every path it held in
// the clear replaced by the path's ID.
func TestOldViewsConverted(t *testing.T) {
	for _, c := range []struct {
		name  string
		plain bool
		file  string
	}{
		{"sealed, version 1 without a header", false, "1700000000\t/memories/secret_x-name.md\n"},
		{"sealed, version 1", false, "memvault views v1\n1700000000\t/memories/secret_x-name.md\n"},
		{"plain, version 2", true, "memvault views v2\n1700000000\t/memories/secret_x-name.md\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{IdentityFile: filepath.Join(dir, "id"), Plain: c.plain}
			v, _, err := Init(context.Background(), filepath.Join(dir, "v.git"), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			k, err := v.currentKey()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(v.repo.StateDir(), "views")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := v.RecordView("/memories/other.md"); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			if !bytes.HasPrefix(data, []byte("memvault views v3\n")) {
				t.Fatalf("the views file after a view starts %q, want version 3", data[:min(len(data), 20)])
			}
			if !c.plain && bytes.Contains(data, []byte("secret_x-name")) {
				t.Errorf("the sealed vault's views file still holds a path in the clear: %q", data)
			}
			views, _, err := v.lastViews()
			if err != nil {
				t.Fatal(err)
			}
			if got := views[viewEntry(k, "/memories/secret_x-name.md")]; !got.Equal(time.Unix(1700000000, 0)) {
				t.Errorf("the old view's time after the conversion = %v, want 1700000000", got)
			}
			if _, ok := views[viewEntry(k, "/memories/other.md")]; !ok || len(views) != 2 {
				t.Errorf("views after the conversion = %v, want the old one and the new", views)
			}
		})
	}
}

// FuzzViews: whatever a vault folder holds as its views file, reading it and
// recording a view never panic, and a view recorded over a file this build
// reads is read back.
func FuzzViews(f *testing.F) {
	f.Add([]byte("memvault views v2\n1700000000\t#abc\n"))
	f.Add([]byte("1700000000\t/memories/a.md\n"))
	f.Add([]byte("memvault views v3\nMVVW\x00\x00\x00\x0a"))
	f.Add([]byte("memvault views v9\n"))
	v, _ := newTestVault(f)
	defer v.Close()
	path := filepath.Join(v.repo.StateDir(), "views")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := v.lastViews(); err != nil {
			return // a newer memvault's: left alone
		}
		if err := v.RecordView("/memories/fuzzed.md"); err != nil {
			t.Fatalf("RecordView over a file lastViews read: %v", err)
		}
		views, _, err := v.lastViews()
		if err != nil {
			t.Fatalf("lastViews after RecordView: %v", err)
		}
		found := false
		for e := range views {
			found = found || strings.HasPrefix(e, "#")
		}
		if !found {
			t.Fatalf("the view recorded is not read back: %v", views)
		}
	})
}
