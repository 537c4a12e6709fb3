package vault_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// LogOldest is the end of Log: the same records, in the same order, and the
// length of the whole history, on a history whose oldest commits lie below
// merges (where Log orders the sides by date) as on a straight one.
func TestLogOldestIsLogsEnd(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	check := func(stage string) {
		t.Helper()
		all := mustLog(t, a)
		for _, n := range []int{1, 2, 3, 5, len(all) - 1, len(all), len(all) + 4} {
			if n < 1 {
				continue
			}
			recs, total, err := a.LogOldest(ctx, n)
			if err != nil {
				t.Fatalf("%s: LogOldest(%d): %v", stage, n, err)
			}
			want := all[max(len(all)-n, 0):]
			if total != len(all) || !slices.Equal(commits(recs), commits(want)) {
				t.Errorf("%s: LogOldest(%d) = %v, %d in all; want %v, %d", stage, n, commits(recs), total, commits(want), len(all))
			}
			for i := range recs {
				if fmt.Sprint(recs[i]) != fmt.Sprint(want[i]) {
					t.Errorf("%s: LogOldest(%d)[%d] = %+v, want Log's %+v", stage, n, i, recs[i], want[i])
				}
			}
		}
	}
	for i := range 4 {
		write(t, a, fmt.Sprintf("/memories/s%d.md", i), "straight\n")
	}
	mustSync(t, a)
	mustSync(t, b)
	check("straight")
	for i := range 3 {
		write(t, a, fmt.Sprintf("/memories/a%d.md", i), "from a\n")
		write(t, b, fmt.Sprintf("/memories/b%d.md", i), "from b\n")
	}
	mustSync(t, a)
	mustSync(t, b)
	mustSync(t, a)
	check("one merge")
	write(t, a, "/memories/a.md", "again\n")
	write(t, b, "/memories/b.md", "again\n")
	mustSync(t, a)
	mustSync(t, b)
	mustSync(t, a)
	write(t, a, "/memories/c.md", "on top\n")
	check("two merges")
}

// LogOldest of an empty history is nothing.
func TestLogOldestEmpty(t *testing.T) {
	v := vaulttest.New(t)
	recs, total, err := v.LogOldest(ctx, 10)
	all := mustLog(t, v)
	if err != nil || total != len(all) || len(recs) != len(all) {
		t.Errorf("LogOldest(10) on a new vault = %d records, %d in all, %v; want Log's %d", len(recs), total, err, len(all))
	}
}

// TestLogOldestIndexLoop: the history index is a file in the vault's folder,
// which may come from elsewhere. A record, written by hand, that makes the
// head its own parent kept LogOldest (the UI's G) walking until its context
// ended; it now stops, naming the damage.
func TestLogOldestIndexLoop(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	vaulttest.Write(t, v, "/memories/a", []byte("a"))
	vaulttest.Write(t, v, "/memories/b", []byte("b"))
	head, err := v.Head()
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	h, err := hex.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	body = append(body, h...)
	body = append(body, 1) // one parent: itself
	body = append(body, h...)
	body = append(body, 0, 0, 0) // flags, no changed paths
	rec := binary.BigEndian.AppendUint32(nil, 0x4d564849)
	rec = binary.BigEndian.AppendUint32(rec, uint32(len(body)))
	rec = binary.BigEndian.AppendUint32(rec, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(filepath.Join(v.Dir(), "memvault", "history-index"), append(rec, body...), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := vault.Open(context.Background(), v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, err := w.LogOldest(ctx, 10); !errors.Is(err, vault.ErrDamaged) {
		t.Fatalf("LogOldest over an index that loops = %v, want ErrDamaged at once", err)
	}
}
