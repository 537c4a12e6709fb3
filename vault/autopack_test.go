package vault_test

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var (
	autoPackCommits = flag.Int("autopack.commits", 600, "TestAutoPackLongHistory: how many commits to make")
	autoPackLimit   = flag.Int("autopack.gcauto", 100, "TestAutoPackLongHistory: the vault's gc.auto (6700 is git's and memvault's default)")
)

// TestAutoPackLongHistory makes a long history through the ordinary write path,
// with no manual gc, and checks that the loose objects stay near gc.auto and
// the packs few, and that memvault's fsck and git's agree the vault is sound.
// The figure for 100,000 commits at the default threshold:
//
//	go test ./vault -run TestAutoPackLongHistory -autopack.commits 100000 -autopack.gcauto 6700 -timeout 30m -v
func TestAutoPackLongHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	repo := filepath.Join(dir, "vault.git")
	if out, err := exec.Command("git", "--git-dir", repo, "config", "gc.auto", fmt.Sprint(*autoPackLimit)).CombinedOutput(); err != nil {
		t.Fatalf("git config gc.auto: %v: %s", err, out)
	}
	v.Close()
	v, err := vault.Open(ctx, repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range *autoPackCommits {
		err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
			return tx.WriteFile(ctx, fmt.Sprintf("/memories/d%d/f%d.md", i%37, i%500), fmt.Appendf(nil, "note %d\n", i))
		})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	v.Close() // waits for a running pack
	loose, _ := filepath.Glob(filepath.Join(repo, "objects", "[0-9a-f][0-9a-f]", "*"))
	packs, _ := filepath.Glob(filepath.Join(repo, "objects", "pack", "pack-*.pack"))
	t.Logf("%d commits, gc.auto %d: %d loose objects, %d packs", *autoPackCommits, *autoPackLimit, len(loose), len(packs))
	// The threshold is estimated from one fan-out folder of 256, as git does:
	// allow for the estimate's spread.
	if max := *autoPackLimit + *autoPackLimit/20 + 300; len(loose) > max {
		t.Errorf("%d loose objects, want at most %d", len(loose), max)
	}
	if len(packs) == 0 || len(packs) > 10 {
		t.Errorf("%d packs, want 1 to 10", len(packs))
	}
	if out, err := exec.Command("git", "--git-dir", repo, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck --strict: %v\n%s", err, out)
	}
	v, err = vault.Open(ctx, repo, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("Fsck = %v, %v", problems, err)
	}
}
