package vault_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkSyncRound (rounds must stay cheap) times the sync a fleet's
// clone makes again and again: a write of its own, then fetch, merge and push
// against a remote whose branch another clone moved with a merge of its own
// since the last round. Both clones edit their own line of one shared file,
// so the file is merged on plaintext in every round, as in TestSyncFleet. The
// history below is 1,000 or 10,000 commits: a round should cost what changed
// since the last one, the same at either length.
func BenchmarkSyncRound(b *testing.B) {
	for _, commits := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("history=%d", commits), func(b *testing.B) { benchSyncRound(b, commits) })
	}
}

func benchSyncRound(b *testing.B, commits int) {
	dir := b.TempDir()
	h := vaulttest.BuildHistory(b, dir, commits, 100)
	opts := vault.Options{IdentityFile: h.IdentityFile}
	seed, err := vault.Open(ctx, h.Dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	vaulttest.Write(b, seed, fleetShared, []byte(fleetLine(0, 0)+"--\n"+fleetLine(1, 0)+"--\n"))
	seed.Close()
	// The clones are copies, as BuildHistory's history holds blobs that are
	// not age files, which a clone would refuse.
	url := fileRemote(b)
	var clones [2]*vault.Vault
	for i := range clones {
		to := filepath.Join(dir, fmt.Sprintf("clone-%d.git", i))
		if err := os.CopyFS(to, os.DirFS(h.Dir)); err != nil {
			b.Fatal(err)
		}
		if clones[i], err = vault.Open(ctx, to, opts); err != nil {
			b.Fatal(err)
		}
		defer clones[i].Close()
		if err := clones[i].AddRemote("origin", url); err != nil {
			b.Fatal(err)
		}
		if _, err := clones[i].Sync(ctx, vault.SyncOptions{Host: "clone"}); err != nil {
			b.Fatal(err)
		}
	}
	// edit is clone i's round-th edit of its line of the shared file.
	edit := func(i, round int) {
		err := clones[i].Update(ctx, vault.Meta{Command: "str_replace"}, func(tx *vault.Tx) error {
			old, err := tx.ReadFile(ctx, fleetShared)
			if err != nil {
				return err
			}
			return tx.WriteFile(ctx, fleetShared, []byte(strings.Replace(string(old), fleetLine(i, round-1), fleetLine(i, round), 1)))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		edit(1, round)
		if _, err := clones[1].Sync(ctx, vault.SyncOptions{Host: "other"}); err != nil {
			b.Fatal(err)
		}
		edit(0, round)
		b.StartTimer()
		res, err := clones[0].Sync(ctx, vault.SyncOptions{Host: "this"})
		if err != nil || res.Action != "merge" || !res.Pushed || len(res.Conflicts) > 0 {
			b.Fatalf("round %d: Sync = %+v, %v; want a clean merge, pushed", round, res, err)
		}
	}
}
