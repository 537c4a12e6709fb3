package vault_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// readOnlyMount shows dir through a read-only bind mount and returns where. A
// read-only file system is the real thing a backup or a shared mount is; file
// modes would not do, since the tests run as root.
func readOnlyMount(t *testing.T, dir string) string {
	t.Helper()
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "--bind", dir, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here (needs root and mount): %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(mnt, "probe"), nil, 0o600); err == nil {
		t.Fatal("the read-only mount takes writes")
	}
	return mnt
}

// TestReadOnlyVault: a vault on a read-only file system can be listed, read,
// logged and checked, and a write says the vault is read-only.
func TestReadOnlyVault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	if err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/a.md", []byte("hello\n"))
	}); err != nil {
		t.Fatal(err)
	}
	v.Close()
	mnt := readOnlyMount(t, dir)

	ro, err := vault.Open(ctx, filepath.Join(mnt, "vault.git"), opts)
	if err != nil {
		t.Fatalf("Open read-only: %v", err)
	}
	defer ro.Close()
	s, err := ro.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if es, err := s.List(ctx, "/memories"); err != nil || len(es) != 1 {
		t.Errorf("List = %v, %v; want one entry", es, err)
	}
	if b, err := s.ReadFile(ctx, "/memories/a.md"); err != nil || string(b) != "hello\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if rs, err := ro.Log(ctx, vault.LogOptions{Path: "/memories/a.md"}); err != nil || len(rs) != 1 {
		t.Errorf("Log(path) = %d records, %v; want 1", len(rs), err)
	}
	if problems, err := ro.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("Fsck = %v, %v", problems, err)
	}
	err = ro.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/b.md", []byte("x"))
	})
	if !errors.Is(err, vault.ErrReadOnly) {
		t.Errorf("a write to a read-only vault: %v, want an error wrapping ErrReadOnly", err)
	}
}
