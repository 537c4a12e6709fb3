package vault_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var (
	syncScaleFiles   = flag.Int("syncscale.files", 10_000, "BenchmarkSyncScale: files in the vault")
	syncScaleCommits = flag.Int("syncscale.commits", 2_000, "BenchmarkSyncScale: commits each clone makes before they sync")
)

// BenchmarkSyncScale is sync at scale: two clones of a vault of 10,000 files,
// each 2,000 commits ahead of the other (each side overwrites its own 200
// files, spread over all 100 folders). The second clone pushes; the first
// merges and pushes (merge-s, target ≤ 5 s); the second fast-forwards over
// that merge (ff-s, target ≤ 2 s). Beside them, in the same run, git on
// plaintext mirrors of the same histories (same files, same edits, the
// plaintext in work trees): git pull and git push (git-merge-s), git pull
// --ff-only (git-ff-s). Then memvault gc on the first clone, against git
// repack -adf on a copy of it (gc/git, target ≤ 1.5x).
//
//	go test ./vault -run '^$' -bench BenchmarkSyncScale -benchtime 1x -count 3 -timeout 60m
//
// -syncscale.files and -syncscale.commits set the size.
func BenchmarkSyncScale(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git binary to compare with")
	}
	files, commits := *syncScaleFiles, *syncScaleCommits
	ctx := context.Background()
	// edit is side's i-th overwrite: side 0 and side 1 each keep to their own
	// files, in every folder.
	edit := func(side, i int) (string, []byte) {
		k := ((i%200)*50 + side*25) % files
		return vaulttest.FilePath(k), fmt.Appendf(vaulttest.Content(k), "%c %d\n", 'a'+side, i)
	}
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		va, opts := vaulttest.NewAt(b, filepath.Join(dir, "a"))
		err := va.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
			for i := range files {
				if err := tx.WriteFile(ctx, vaulttest.FilePath(i), vaulttest.Content(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		url := fileRemote(b)
		if err := va.AddRemote("origin", url); err != nil {
			b.Fatal(err)
		}
		if _, err := va.Sync(ctx, vault.SyncOptions{}); err != nil {
			b.Fatal(err)
		}
		vb, _, err := vault.Clone(ctx, url, filepath.Join(dir, "b.git"), opts, vault.CloneOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range commits {
			for side, v := range []*vault.Vault{va, vb} {
				p, data := edit(side, i)
				vaulttest.Write(b, v, p, data)
			}
		}
		ga, gb := plainMirrors(b, filepath.Join(dir, "plain"), files, commits, edit)
		// The writes' background packing is done before anything is timed,
		// and so is each sync's (a journal flushed after a pause, packs
		// merged): the clones stand for two machines, and the other
		// clone's packing, run meanwhile in this process, counted in the
		// CPU time of the phase it overlapped.
		reopen := func(v **vault.Vault) {
			d := (*v).Dir()
			if err := (*v).Close(); err != nil {
				b.Fatal(err)
			}
			if *v, err = vault.Open(ctx, d, opts); err != nil {
				b.Fatal(err)
			}
		}
		reopen(&va)
		reopen(&vb)

		// The second clone pushes first, so the first one merges.
		if res, err := vb.Sync(ctx, vault.SyncOptions{}); err != nil || res.Action != "push" {
			b.Fatalf("Sync of the second clone = %+v, %v; want a push", res, err)
		}
		gb.run("push", "-q", "origin", "main")
		reopen(&vb)
		vaulttest.Writeback()

		merge, mergeCPU := timed("merge", func() {
			if res, err := va.Sync(ctx, vault.SyncOptions{}); err != nil || res.Action != "merge" || !res.Pushed {
				b.Fatalf("Sync = %+v, %v; want a merge, pushed", res, err)
			}
		})
		gitMerge, _ := timed("git-merge", func() {
			ga.run("pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
			ga.run("push", "-q", "origin", "main")
		})
		reopen(&va)
		vaulttest.Writeback()
		ff, ffCPU := timed("ff", func() {
			if res, err := vb.Sync(ctx, vault.SyncOptions{}); err != nil || res.Action != "fast-forward" {
				b.Fatalf("Sync = %+v, %v; want a fast-forward", res, err)
			}
		})
		gitFF, _ := timed("git-ff", func() { gb.run("pull", "-q", "--ff-only", "origin", "main") })
		vb.Close()

		// The first clone's objects after memvault gc, against git's repack
		// of a copy.
		res, err := va.Pack(ctx)
		if err != nil {
			b.Fatal(err)
		}
		repo := va.Dir()
		va.Close()
		cp := filepath.Join(dir, "copy.git")
		if out, err := exec.Command("cp", "-a", repo, cp).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v\n%s", err, out)
		}
		if out, err := exec.Command("git", "--git-dir", cp, "repack", "-adf", "-q").CombinedOutput(); err != nil {
			b.Fatalf("git repack -adf: %v\n%s", err, out)
		}
		git := dirBytes(b, filepath.Join(cp, "objects"))

		b.ReportMetric(merge.Seconds(), "merge-s")
		b.ReportMetric(mergeCPU.Seconds(), "merge-cpu-s")
		b.ReportMetric(gitMerge.Seconds(), "git-merge-s")
		b.ReportMetric(ff.Seconds(), "ff-s")
		b.ReportMetric(ffCPU.Seconds(), "ff-cpu-s")
		b.ReportMetric(gitFF.Seconds(), "git-ff-s")
		b.ReportMetric(float64(res.After)/(1<<20), "gc-MiB")
		b.ReportMetric(float64(git)/(1<<20), "git-MiB")
		b.ReportMetric(float64(res.After)/float64(git), "gc/git")
		os.RemoveAll(dir)
	}
}

// timed runs f and returns the wall time and this process's CPU time it took.
// Its samples in a CPU profile carry the label phase=name, so that
// -cpuprofile with pprof's -tagfocus shows one phase alone.
func timed(name string, f func()) (wall, cpu time.Duration) {
	start, startCPU := time.Now(), vaulttest.CPUTime()
	pprof.Do(context.Background(), pprof.Labels("phase", name), func(context.Context) { f() })
	return time.Since(start), vaulttest.CPUTime() - startCPU
}

// plainGit is a git work tree of plaintext.
type plainGit struct {
	b   *testing.B
	dir string
}

func (g plainGit) run(args ...string) string {
	g.b.Helper()
	return g.runIn(nil, args...)
}

func (g plainGit) runIn(stdin []byte, args ...string) string {
	g.b.Helper()
	cmd := exec.Command("git", append([]string{"-C", g.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.b.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// plainMirrors makes, under dir, a bare remote and two clones of it holding the
// vault's files in plaintext, each clone then committing (git fast-import)
// its side's edits, as the vault's clones did: ga and gb, before any sync.
func plainMirrors(b *testing.B, dir string, files, commits int, edit func(side, i int) (string, []byte)) (ga, gb plainGit) {
	remote := filepath.Join(dir, "remote.git")
	if err := os.MkdirAll(remote, 0o755); err != nil {
		b.Fatal(err)
	}
	plainGit{b, remote}.run("init", "-q", "--bare", "-b", "main")
	ga = plainGit{b, filepath.Join(dir, "a")}
	if err := os.MkdirAll(ga.dir, 0o755); err != nil {
		b.Fatal(err)
	}
	ga.run("init", "-q", "-b", "main")
	var s bytes.Buffer
	when := time.Now().Add(-time.Hour).Unix()
	commit := func(msg string, from bool, puts func(put func(p string, data []byte))) {
		when++
		fmt.Fprintf(&s, "commit refs/heads/main\ncommitter a <a@a> %d +0000\ndata %d\n%s\n", when, len(msg), msg)
		if from {
			s.WriteString("from refs/heads/main^0\n")
		}
		puts(func(p string, data []byte) {
			fmt.Fprintf(&s, "M 100644 inline %s\ndata %d\n%s\n", strings.TrimPrefix(p, "/"), len(data), data)
		})
	}
	commit("import", false, func(put func(string, []byte)) {
		for i := range files {
			put(vaulttest.FilePath(i), vaulttest.Content(i))
		}
	})
	ga.runIn(s.Bytes(), "fast-import", "--quiet")
	ga.run("reset", "-q", "--hard")
	ga.run("remote", "add", "origin", remote)
	ga.run("push", "-q", "origin", "main")
	gb = plainGit{b, filepath.Join(dir, "b")}
	plainGit{b, dir}.run("clone", "-q", remote, gb.dir)
	for side, g := range []plainGit{ga, gb} {
		s.Reset()
		for i := range commits {
			p, data := edit(side, i)
			commit("str_replace "+p, i == 0, func(put func(string, []byte)) { put(p, data) })
		}
		g.runIn(s.Bytes(), "fast-import", "--quiet")
		g.run("reset", "-q", "--hard")
	}
	return ga, gb
}
