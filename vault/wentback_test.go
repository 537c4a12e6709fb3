package vault_test

import (
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
)

// The host put the remote's main back to an older commit: the next sync just
// pushed again and nobody heard of it. Sync now says that the remote no
// longer holds what this clone pushed, and whether it put it back.
func TestSyncSaysRemoteWentBack(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, _, _ := hostilePair(t, url)
	write(t, a, "/memories/one.md", "1\n")
	mustSync(t, a)
	old := head(t, a)
	write(t, a, "/memories/two.md", "2\n")
	mustSync(t, a)
	pushed := head(t, a)
	if res := mustSync(t, a); res.WentBack {
		t.Errorf("an unchanged remote said to go back: %+v", res)
	}

	h := gittest.NewHostile(t, url) // the host alone: no key needed to move a ref
	h.Git("update-ref", "refs/heads/main", old)
	h.Git("push", "-q", "--force", url, "refs/heads/main:refs/heads/main")

	res, err := a.Sync(ctx, vault.SyncOptions{Host: "test", Mode: vault.SyncPull})
	if err != nil || !res.WentBack || res.Seen != pushed || res.Found != old || res.Pushed {
		t.Fatalf("pull = %+v, %v; want WentBack from %s to %s, nothing pushed", res, err, pushed, old)
	}
	mustSync(t, a)                                                         // puts it back
	h.Git("push", "-q", "--force", url, "refs/heads/main:refs/heads/main") // back again
	res = mustSync(t, a)
	if !res.WentBack || res.Seen != pushed || !res.Pushed || h.Git("ls-remote", url, "refs/heads/main")[:40] != pushed {
		t.Errorf("sync = %+v; want WentBack, and %s pushed back", res, pushed)
	}
	if res := mustSync(t, a); res.WentBack {
		t.Errorf("once put back, sync still says the remote went back: %+v", res)
	}
}
