package exchange_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// Helpers the sync tests share with package vault's tests.

func write(t *testing.T, v *vault.Vault, p, content string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "create", ToolUseID: "toolu_1"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, p, []byte(content))
	})
	if err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

func read(t *testing.T, v *vault.Vault, p string) (string, error) {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ReadFile(ctx, p)
	return string(b), err
}

// dirBytes is the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// wantMergedNotes checks that v holds what the merge of the two sides'
// notes in the sealed merge tests makes: a's edit and b's together, b's new
// file, and the file a renamed, and returns the snapshot it read.
func wantMergedNotes(t *testing.T, v *vault.Vault) *vault.Snapshot {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Files(ctx)
	if err != nil || strings.Join(files, " ") != "/memories/notes/b.md /memories/notes/deux.md /memories/notes/one.md" {
		t.Errorf("Files = %v, %v", files, err)
	}
	for p, want := range map[string]string{
		"/memories/notes/one.md":  "one from a\ntwo\nthree from b\n",
		"/memories/notes/b.md":    "b's\n",
		"/memories/notes/deux.md": "two\n",
	} {
		if got, err := read(t, v, p); err != nil || got != want {
			t.Errorf("read %s = %q, %v; want %q", p, got, err, want)
		}
	}
	return s
}
