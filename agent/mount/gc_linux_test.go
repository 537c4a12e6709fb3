//go:build linux

package mount_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestMountReadsAcrossGC: a mounted vault reads, through the folder, every
// file it could read before another handle wrote and merged every pack into
// one, round after round, files of every size class among them. A file above
// 16 KiB that the mount had not read yet was once reported missing after
// such a merge, for as long as the mount stayed up.
func TestMountReadsAcrossGC(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	// Another handle writes, so that the mounted one has nothing cached.
	other, err := vault.Open(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	want := map[string][]byte{}
	for i := range 10 {
		data := bytes.Repeat(fmt.Appendf(nil, "file %d, line of forty bytes or so...\n", i), 1+i*i*30) // 40 B to 130 KB
		p := fmt.Sprintf("/memories/f%d.md", i)
		vaulttest.Write(t, other, p, data)
		want[p] = data
	}
	if _, err := other.Pack(ctx); err != nil {
		t.Fatal(err)
	}
	m := mountVault(t, v, mount.Options{})
	if _, err := os.ReadFile(filepath.Join(m.Dir(), "f0.md")); err != nil {
		t.Fatalf("read f0.md through the mount: %v", err)
	}

	for round := 1; round <= 4; round++ {
		// A file the mount is not asked about: only the merge matters.
		vaulttest.Write(t, other, fmt.Sprintf("/memories/new%d.md", round), bytes.Repeat([]byte("new\n"), 9000))
		if _, err := other.Pack(ctx); err != nil {
			t.Fatalf("round %d: Pack: %v", round, err)
		}
		for p, data := range want {
			got, err := os.ReadFile(filepath.Join(m.Dir(), filepath.Base(p)))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("round %d: read %s through the mount: %d bytes, %v; want %d bytes", round, p, len(got), err, len(data))
			}
		}
	}
}
