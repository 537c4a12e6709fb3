package vault_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestExpire: a file neither viewed nor changed within the period goes, in one
// commit; one viewed or changed within it stays; a dry run deletes nothing.
func TestExpire(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v0, opts := vaulttest.NewAt(t, t.TempDir())
	opts.Now = func() time.Time { return now }
	v, err := vault.Open(ctx, v0.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, p := range []string{"/memories/old.md", "/memories/d/viewed.md", "/memories/d/changed.md", "/memories/e/moved.md"} {
		write(t, v, p, "x")
	}
	now = now.Add(100 * 24 * time.Hour)
	if err := v.RecordView("/memories/d/viewed.md"); err != nil {
		t.Fatal(err)
	}
	write(t, v, "/memories/d/changed.md", "y")
	if err := v.Update(ctx, vault.Meta{Command: "rename"}, func(tx *vault.Tx) error {
		return tx.Rename("/memories/e", "/memories/f")
	}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(20 * 24 * time.Hour)

	before := mustLog(t, v)
	UnusedFile, commit, err := v.Expire(ctx, 90*24*time.Hour, true)
	if err != nil || commit != "" || len(UnusedFile) != 1 || UnusedFile[0].Path != "/memories/old.md" {
		t.Fatalf("Expire(90d, dry run) = %v, %q, %v; want old.md alone and no commit", UnusedFile, commit, err)
	}
	if after := mustLog(t, v); len(after) != len(before) {
		t.Fatalf("a dry run made a commit")
	}
	UnusedFile, commit, err = v.Expire(ctx, 90*24*time.Hour, false)
	if err != nil || commit == "" || len(UnusedFile) != 1 {
		t.Fatalf("Expire(90d) = %v, %q, %v; want old.md deleted in a commit", UnusedFile, commit, err)
	}
	after := mustLog(t, v)
	if len(after) != len(before)+1 || after[0].Command != "expire" {
		t.Fatalf("Expire made %d commits (newest %q), want one expire commit", len(after)-len(before), after[0].Command)
	}
	for p, want := range map[string]bool{"/memories/old.md": false, "/memories/d/viewed.md": true,
		"/memories/d/changed.md": true, "/memories/f/moved.md": true} {
		if _, err := read(t, v, p); (err == nil) != want {
			t.Errorf("after Expire, ReadFile(%q) error = %v; want present %v", p, err, want)
		}
	}
	// Nothing left to expire: no commit.
	if UnusedFile, commit, err := v.Expire(ctx, 90*24*time.Hour, false); err != nil || commit != "" || len(UnusedFile) != 0 {
		t.Errorf("second Expire = %v, %q, %v; want nothing", UnusedFile, commit, err)
	}
}

// TestNewerViewsLeftAlone: a views file of a newer memvault is neither
// appended to nor rewritten, and expire, which needs it, says to upgrade.
func TestNewerViewsLeftAlone(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/a.md", "x")
	path := filepath.Join(v.Dir(), "memvault", "views")
	newer := []byte("memvault views v9\nwhatever it records\n")
	if err := os.WriteFile(path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := v.RecordView("/memories/a.md"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Expire(ctx, time.Hour, false); !errors.Is(err, vault.ErrNewerFormat) {
		t.Errorf("Expire over a newer views file = %v, want ErrNewerFormat", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, newer) {
		t.Errorf("the newer views file was changed: %q", got)
	}
}

// TestExpireAcrossRotation: a sealed vault records a view by its path's ID
// under the vault key of the time; after the key rotates, a file viewed just
// before still counts as used, and one nobody viewed goes.
func TestExpireAcrossRotation(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	v0, opts := vaulttest.NewSealedAt(t, t.TempDir())
	opts.Now = func() time.Time { return now }
	v, err := vault.Open(ctx, v0.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	write(t, v, "/memories/viewed.md", "x")
	write(t, v, "/memories/forgotten.md", "x")
	now = now.Add(100 * 24 * time.Hour)
	if err := v.RecordView("/memories/viewed.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
		t.Fatal(err)
	}
	UnusedFile, _, err := v.Expire(ctx, 30*24*time.Hour, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(UnusedFile) != 1 || UnusedFile[0].Path != "/memories/forgotten.md" {
		t.Errorf("Expire after a rotation would delete %+v; want forgotten.md alone", UnusedFile)
	}
}
