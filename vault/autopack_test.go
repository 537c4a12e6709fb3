package vault_test

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
//
// countObjects asks git how many objects the repository holds loose and packed,
// and in how many packs.
func countObjects(t *testing.T, repo string) (loose, inPack, packs int) {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", repo, "count-objects", "-v").Output()
	if err != nil {
		t.Fatalf("git count-objects: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.Atoi(v)
		switch k {
		case "count":
			loose = n
		case "in-pack":
			inPack = n
		case "packs":
			packs = n
		}
	}
	return loose, inPack, packs
}

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
	loose, inPack, packs := countObjects(t, repo)
	t.Logf("%d commits, gc.auto %d: %d loose objects, %d packed in %d packs", *autoPackCommits, *autoPackLimit, loose, inPack, packs)
	if packs == 0 || packs > 10 {
		t.Errorf("%d packs, want 1 to 10", packs)
	}
	// Packing runs beside the writes, and on a loaded machine it falls behind
	// by what is written while it runs; so the default, short run only checks
	// that it keeps up on the whole. A long run (the flags) checks the bound.
	if *autoPackCommits >= 10000 {
		if max := *autoPackLimit + 300; loose > max {
			t.Errorf("%d loose objects, want at most %d", loose, max)
		}
	} else if loose > (loose+inPack)/3 {
		t.Errorf("%d of %d objects are loose: packing does not keep up", loose, loose+inPack)
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
