package vault_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// withLimits reopens v with cfg appended to its config's [memvault] section.
func withLimits(t *testing.T, v *vault.Vault, cfg string) *vault.Vault {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(v.Dir(), "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[memvault]\n" + cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	v2, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v2.Close() })
	return v2
}

// wantLimit fails unless err is a *LimitError for path with would, limit and sentinel.
func wantLimit(t *testing.T, call string, err error, path string, would, limit int64, sentinel error) {
	t.Helper()
	var le *vault.LimitError
	if !errors.As(err, &le) || !errors.Is(err, sentinel) {
		t.Fatalf("%s = %v, want a *LimitError wrapping %v", call, err, sentinel)
	}
	if le.Path != path || le.Would != would || le.Limit != limit {
		t.Errorf("%s = %+v, want path %s, would %d, limit %d", call, *le, path, would, limit)
	}
}

func limitedUpdate(v *vault.Vault, fn func(tx *vault.Tx) error) error {
	return v.Update(ctx, vault.Meta{Command: "create"}, fn)
}

// TestLimitsInTx: the vault's transaction enforces the file count and
// size limits itself, counting everything the Tx staged, so a Tx that deletes
// may use the room it made; in both formats (the sealed one's sizes are in
// its sealed size headers).
func TestLimitsInTx(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(formatName(sealed), func(t *testing.T) { limitsInTx(t, sealed) })
	}
}

func limitsInTx(t *testing.T, sealed bool) {
	v := withLimits(t, vaulttest.NewFormat(t, sealed), "\tmaxFiles = 3\n\tmaxVaultSize = 100\n\tmaxFileSize = 60\n")
	write(t, v, "/memories/a.md", strings.Repeat("a", 40))
	write(t, v, "/memories/b.md", strings.Repeat("b", 40))
	write(t, v, "/memories/c.md", "c")
	err := limitedUpdate(v, func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/d.md", nil) })
	wantLimit(t, "WriteFile(d.md) as the 4th file", err, "/memories/d.md", 4, 3, vault.ErrTooManyFiles)
	err = limitedUpdate(v, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/c.md", []byte(strings.Repeat("c", 20)))
	})
	if err != nil {
		t.Fatalf("WriteFile(c.md) of 20 bytes, to exactly the size limit: %v", err)
	}
	err = limitedUpdate(v, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/c.md", []byte(strings.Repeat("c", 21)))
	})
	wantLimit(t, "WriteFile(c.md) of 21 bytes", err, "/memories/c.md", 101, 100, vault.ErrVaultFull)
	err = limitedUpdate(v, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/e.md", []byte(strings.Repeat("e", 61)))
	})
	wantLimit(t, "WriteFile(e.md) of 61 bytes", err, "/memories/e.md", 61, 60, vault.ErrTooLarge)

	// Room made in the same Tx counts: a.md goes, d.md comes.
	err = limitedUpdate(v, func(tx *vault.Tx) error {
		if err := tx.Remove("/memories/a.md"); err != nil {
			return err
		}
		return tx.WriteFile(ctx, "/memories/d.md", []byte(strings.Repeat("d", 40)))
	})
	if err != nil {
		t.Fatalf("Remove(a.md) then WriteFile(d.md) in one Tx: %v", err)
	}
	// A second write in the Tx counts the first.
	err = limitedUpdate(v, func(tx *vault.Tx) error {
		if err := tx.Remove("/memories/b.md"); err != nil {
			return err
		}
		if err := tx.WriteFile(ctx, "/memories/e.md", nil); err != nil {
			return err
		}
		return tx.WriteFile(ctx, "/memories/f.md", nil)
	})
	wantLimit(t, "Remove(b.md), WriteFile(e.md), WriteFile(f.md) in one Tx", err, "/memories/e.md", 4, 3, vault.ErrTooManyFiles)
	snap, _ := v.Snapshot(ctx)
	if u, err := snap.Usage(ctx); err != nil || u.Files != 3 || u.Bytes != 40+20+40 {
		t.Errorf("Usage() = %+v, %v; want 3 files of 100 bytes", u, err)
	}
}

// TestLimitsUndo: restore, revert and rollback obey the limits a
// write does; one that shrinks the vault always passes.
func TestLimitsUndo(t *testing.T) {
	v := withLimits(t, vaulttest.New(t), "\tmaxFiles = 2\n")
	write(t, v, "/memories/a.md", "a")
	write(t, v, "/memories/b.md", "b")
	withA := head(t, v)
	if err := limitedUpdate(v, func(tx *vault.Tx) error { return tx.Remove("/memories/a.md") }); err != nil {
		t.Fatal(err)
	}
	deleted := head(t, v)
	write(t, v, "/memories/c.md", "c")
	before := len(vaulttest.Log(t, v, vault.LogOptions{}))

	_, err := v.Restore(ctx, vault.Meta{}, "/memories/a.md", withA)
	wantLimit(t, "Restore(a.md)", err, "/memories/a.md", 3, 2, vault.ErrTooManyFiles)
	_, err = v.Revert(ctx, vault.Meta{}, deleted)
	wantLimit(t, "Revert(the delete of a.md)", err, "/memories/a.md", 3, 2, vault.ErrTooManyFiles)
	if n := len(vaulttest.Log(t, v, vault.LogOptions{})); n != before {
		t.Fatalf("%d commits after refused undos, want %d", n, before)
	}
	// Back to a and b: as many files as now, so it passes.
	if _, err := v.Rollback(ctx, vault.Meta{}, withA); err != nil {
		t.Fatalf("Rollback to two files: %v", err)
	}
	if got, err := read(t, v, "/memories/a.md"); err != nil || got != "a" {
		t.Errorf("after rollback a.md = %q, %v", got, err)
	}
}

// TestLimitsMergeExempt: a sync merge never refuses what the other replica
// holds, even past a limit; after it, only changes that shrink the vault pass.
func TestLimitsMergeExempt(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	b = withLimits(t, b, "\tmaxFiles = 2\n")
	write(t, a, "/memories/x1.md", "x1")
	write(t, a, "/memories/x2.md", "x2")
	mustSync(t, a)
	write(t, b, "/memories/y1.md", "y1")
	mustSync(t, b)
	for _, p := range []string{"/memories/x1.md", "/memories/x2.md", "/memories/y1.md"} {
		if _, err := read(t, b, p); err != nil {
			t.Errorf("after the merge, %s: %v", p, err)
		}
	}
	err := limitedUpdate(b, func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/y2.md", nil) })
	wantLimit(t, "WriteFile(y2.md) past the limit", err, "/memories/y2.md", 4, 2, vault.ErrTooManyFiles)
	if err := limitedUpdate(b, func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/y1.md", []byte("shorter")) }); err != nil {
		t.Errorf("rewriting a file past the file limit: %v", err)
	}
	if err := limitedUpdate(b, func(tx *vault.Tx) error { return tx.Remove("/memories/y1.md") }); err != nil {
		t.Errorf("deleting past the limit: %v", err)
	}
}

// TestSealKeepsUsage: the conversion to the sealed format pads every file
// (one of 20 bytes is stored as a 1 KiB frame), but the vault's limits count
// plaintext, which padding does not change: a plain vault at exactly its size
// limit is at exactly the same limit once sealed, and a write that adds a
// byte is refused after as it was before.
func TestSealKeepsUsage(t *testing.T) {
	v := withLimits(t, vaulttest.NewFormat(t, false), "\tmaxFiles = 3\n\tmaxVaultSize = 100\n")
	write(t, v, "/memories/a.md", strings.Repeat("a", 40))
	write(t, v, "/memories/d/b.md", strings.Repeat("b", 40))
	write(t, v, "/memories/c.md", strings.Repeat("c", 20))
	grow := func(when string) {
		t.Helper()
		err := limitedUpdate(v, func(tx *vault.Tx) error {
			return tx.WriteFile(ctx, "/memories/c.md", []byte(strings.Repeat("c", 21)))
		})
		wantLimit(t, "WriteFile(c.md) of 21 bytes "+when, err, "/memories/c.md", 101, 100, vault.ErrVaultFull)
	}
	grow("before the conversion")
	if _, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{}); err != nil {
		t.Fatalf("Seal of a vault at its size limit: %v", err)
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := snap.Usage(ctx); err != nil || u.Files != 3 || u.Bytes != 100 {
		t.Errorf("Usage() once sealed = %+v, %v; want 3 files of 100 bytes, as before", u, err)
	}
	grow("once sealed")
	err = limitedUpdate(v, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/c.md", []byte(strings.Repeat("C", 20)))
	})
	if err != nil {
		t.Errorf("WriteFile(c.md) of 20 bytes once sealed, to exactly the limit: %v", err)
	}
}

// TestSealedLargestFileReads: a sealed file is stored padded to its bucket,
// up to 512 KiB more than its size at 16 MiB. A vault whose file limit is
// 16 MiB wrote a file of that size and then refused to read it back, as
// larger than the limit: the read's bound must allow for the padding too.
func TestSealedLargestFileReads(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 16 MiB file")
	}
	v := withLimits(t, vaulttest.NewFormat(t, true), "\tmaxFileSize = 16777216\n")
	big := bytes.Repeat([]byte("0123456789abcde\n"), 1<<20) // 16 MiB, the limit
	write(t, v, "/memories/big.md", string(big))
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.ReadFile(ctx, "/memories/big.md")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("ReadFile of a file at the 16 MiB limit: %d bytes, %v; want it back whole", len(got), err)
	}
}
