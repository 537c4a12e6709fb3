package main

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// TestKillReview kills the review line's writers with SIGKILL at random
// moments, 24 times: `memvault serve --review` while it streams writes onto
// the line, and `memvault review approve --all` while it replays them on main
// and stands the line on main again. After each kill git fsck --strict passes
// before memvault opens the vault, and every write acknowledged is pending or
// on main, readable in the agent's view, and approved at most once.
func TestKillReview(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 24 processes")
	}
	p := newProcess(t, t.TempDir())
	p.run(t, "", "init")
	rng := rand.New(rand.NewPCG(13, 17))
	acked := map[string]string{}
	kills := 24
	if raceEnabled {
		kills = 8
	}
	for kill := range kills {
		if kill%2 == 0 {
			for path, text := range p.killServeMidStream(t, kill, time.Duration(rng.IntN(40000))*time.Microsecond, "--review") {
				acked[path] = text
			}
		} else {
			cmd := exec.Command(p.exe, "review", "approve", "--all")
			cmd.Env = p.env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rng.Int64N(int64(300 * time.Millisecond))))
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}
		checkReviewAfterCrash(t, p, kill, acked)
	}
	p.run(t, "", "review", "approve", "--all")
	if out := p.run(t, "", "fsck"); withoutNotes(out) != "ok: history, objects, encryption and identity are sound\n" {
		t.Errorf("memvault fsck after the kills: %q", out)
	}
	checkReviewAfterCrash(t, p, kills, acked)
	t.Logf("%d writes acknowledged on the review line across %d kills", len(acked), kills)
}

func checkReviewAfterCrash(t *testing.T, p *process, kill int, acked map[string]string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir", p.vault, "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Fatalf("after kill %d: git fsck --strict: %v\n%s", kill, err, out)
	}
	ctx := context.Background()
	v, err := vault.Open(ctx, p.vault, vault.Options{IdentityFile: p.identity})
	if err != nil {
		t.Fatalf("after kill %d: open: %v", kill, err)
	}
	defer v.Close()
	pending, err := v.Review(ctx, vault.ReviewOptions{})
	if err != nil {
		t.Fatalf("after kill %d: review: %v", kill, err)
	}
	waits := map[string]bool{}
	for _, c := range pending {
		waits[c.Path] = true
	}
	recs, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onMain := map[string]bool{}
	approved := map[string]int{}
	for _, r := range recs {
		if r.Approved != "" {
			approved[r.Approved]++
			onMain[r.Path] = true
			if approved[r.Approved] > 1 {
				t.Fatalf("after kill %d: change %s approved twice", kill, r.Approved)
			}
		}
	}
	view, err := v.Agent(vault.AgentOptions{Review: true}).Snapshot(ctx)
	if err != nil {
		t.Fatalf("after kill %d: the agent's view: %v", kill, err)
	}
	for path, want := range acked {
		if !waits[path] && !onMain[path] {
			t.Fatalf("after kill %d: acknowledged %s is neither pending nor on main", kill, path)
		}
		if got, err := view.ReadFile(ctx, path); err != nil || string(got) != want {
			t.Fatalf("after kill %d: the agent's view of %s reads %q, %v", kill, path, got, err)
		}
	}
}
