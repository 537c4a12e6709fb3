package gitlog

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/client"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestBesideGoGit: a program that embeds memvault beside its own use of
// go-git keeps go-git as it was. memvault's fetches and pushes, over http and
// over a local path, leave go-git's table of protocols alone (memvault once
// put its own in it, and a plain go-git push to a local path then failed
// with memvault's refusal), and a plain go-git client in the same process
// clones and pushes over both as before.
func TestBesideGoGit(t *testing.T) {
	gittest.Git(t)
	ctx := context.Background()
	before := map[string]string{}
	for name, tr := range client.Protocols {
		before[name] = fmt.Sprintf("%T", tr)
	}

	// memvault, both ways, over http and over a local path.
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("memvault's")})
	web, local := gittest.HTTP(t, "", ""), gittest.Bare(t, t.TempDir(), "local")
	for name, url := range map[string]string{"web": web, "local": local} {
		if err := r.AddRemote(name, url); err != nil {
			t.Fatal(err)
		}
		if err := r.Push(ctx, name, h, TransferOptions{}); err != nil {
			t.Fatalf("memvault push to %s: %v", name, err)
		}
		if got, err := r.Fetch(ctx, name, TransferOptions{}); err != nil || got != h {
			t.Fatalf("memvault fetch from %s = %s, %v; want %s", name, got, err, h)
		}
	}
	for name, tr := range client.Protocols {
		if got := fmt.Sprintf("%T", tr); got != before[name] {
			t.Errorf("go-git's transport for %s is %s after memvault's transfers, was %s", name, got, before[name])
		}
	}
	if len(client.Protocols) != len(before) {
		t.Errorf("go-git has %d transports after memvault's transfers, had %d", len(client.Protocols), len(before))
	}

	// A plain go-git client, in the same process: it clones what memvault
	// pushed, commits, and pushes back, over both.
	for name, url := range map[string]string{"web": web, "local": local} {
		wt := filepath.Join(t.TempDir(), name)
		repo, err := git.PlainCloneContext(ctx, wt, false, &git.CloneOptions{URL: url})
		if err != nil {
			t.Fatalf("go-git clone of %s: %v", name, err)
		}
		tree, err := repo.Worktree()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tree.Add("a"); err != nil {
			t.Fatalf("go-git: the clone of %s has no file a: %v", name, err)
		}
		sig := &object.Signature{Name: "go-git", Email: "go-git@example.com", When: time.Unix(1_800_000_000, 0)}
		if _, err := tree.Commit("go-git's own\n", &git.CommitOptions{Author: sig, AllowEmptyCommits: true}); err != nil {
			t.Fatal(err)
		}
		err = repo.PushContext(ctx, &git.PushOptions{RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}})
		if err != nil {
			t.Fatalf("go-git push to %s after memvault's transfers: %v", name, err)
		}
		if out, err := exec.Command("git", "--git-dir", local, "fsck", "--strict").CombinedOutput(); err != nil {
			t.Fatalf("git fsck of the local remote: %v\n%s", err, out)
		}
	}
}
