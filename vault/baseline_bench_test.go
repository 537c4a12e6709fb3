package vault_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkGitInProcess is BenchmarkWrite's baseline measured like with like: the
// same write (encrypt a 1 KB file of 5,000 into a git checkout, commit it) with
// no process started per write, against BenchmarkWrite's files=5000 figure.
//
//   - go-git-worktree: go-git in this process, Worktree.Add of the one file (no
//     status scan) and Worktree.Commit. go-git syncs nothing to disk.
//   - fast-import: one long-lived `git fast-import` process, fed one commit and a
//     checkpoint (which writes the commit's objects and moves the branch) per
//     write; fsync=all makes git as durable as memvault.
//
// BenchmarkNaiveGit, which starts `git add` and `git commit` for each write, is
// the baseline of a whole memvault process (cmd/memvault's BenchmarkProcess).
func BenchmarkGitInProcess(b *testing.B) {
	const files = 5000
	b.Run("go-git-worktree/files=5000", func(b *testing.B) {
		n := naiveCheckout(b, "go-git", files)
		repo, err := git.PlainOpen(n.Dir())
		if err != nil {
			b.Fatal(err)
		}
		wt, err := repo.Worktree()
		if err != nil {
			b.Fatal(err)
		}
		sig := &object.Signature{Name: "a", Email: "a@a"}
		timedWrites(b, files, func(p string, data []byte) {
			rel := n.Put(p, data)
			if err := wt.AddWithOptions(&git.AddOptions{Path: rel, SkipStatus: true}); err != nil {
				b.Fatalf("go-git add %s: %v", rel, err)
			}
			sig.When = time.Now()
			if _, err := wt.Commit("str_replace "+p, &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
				b.Fatalf("go-git commit %s: %v", rel, err)
			}
		})
	})
	for _, fsync := range []string{"default", "all"} {
		b.Run("fast-import/files=5000/fsync="+fsync, func(b *testing.B) {
			n := naiveCheckout(b, "fast-import/"+fsync, files)
			if fsync == "all" {
				n.SetConfig("core.fsync", "all")
			}
			fi := startFastImport(b, n.Dir())
			timedWrites(b, files, func(p string, data []byte) {
				// The ciphertext is made as the other baselines make it, in
				// the checkout, then handed to git inline.
				rel := n.Put(p, data)
				ct, err := os.ReadFile(n.Dir() + "/" + rel)
				if err != nil {
					b.Fatal(err)
				}
				fi.commit(rel, "str_replace "+p, ct)
			})
			fi.close()
		})
	}
}

// naiveCheckout returns the checkout of files ciphertext files kept under key
// across -count runs: making one takes seconds and is not what is measured.
func naiveCheckout(b *testing.B, key string, files int) *vaulttest.Naive {
	key = fmt.Sprint("naive/", key, "/", files)
	if n, ok := benchVaults.Load(key); ok {
		return n.(*vaulttest.Naive).For(b)
	}
	n := vaulttest.NewNaive(b, benchDir(b), files)
	benchVaults.Store(key, n)
	return n
}

// timedWrites runs b.N writes of random files among files, reporting latency
// percentiles as BenchmarkWrite does.
func timedWrites(b *testing.B, files int, write func(p string, data []byte)) {
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		write(vaulttest.FilePath(rng.IntN(files)), vaulttest.Content(i))
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// fastImport is a running `git fast-import` on a checkout's repository, adding
// commits to its main branch.
type fastImport struct {
	b      *testing.B
	dir    string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	first  bool
	before int // commits on main at the start
	n      int
	buf    bytes.Buffer
}

func startFastImport(b *testing.B, dir string) *fastImport {
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet", "--done")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("git fast-import: %v", err)
	}
	return &fastImport{b: b, dir: dir, before: commitCount(b, dir), cmd: cmd, in: in, out: bufio.NewReader(out), first: true}
}

// commit commits data at rel on main, and returns once git has written it and
// moved the branch: the checkpoint's progress line follows both.
func (f *fastImport) commit(rel, msg string, data []byte) {
	f.n++
	f.buf.Reset()
	fmt.Fprintf(&f.buf, "commit refs/heads/main\ncommitter a <a@a> %d +0000\ndata %d\n%s\n", time.Now().Unix(), len(msg), msg)
	if f.first {
		// The branch exists in the repository but not yet in fast-import.
		f.buf.WriteString("from refs/heads/main^0\n")
		f.first = false
	}
	fmt.Fprintf(&f.buf, "M 100644 inline %s\ndata %d\n", rel, len(data))
	f.buf.Write(data)
	fmt.Fprintf(&f.buf, "\n\ncheckpoint\n\nprogress done %d\n", f.n)
	if _, err := f.in.Write(f.buf.Bytes()); err != nil {
		f.b.Fatalf("git fast-import: write: %v", err)
	}
	want := fmt.Sprintf("progress done %d\n", f.n)
	if line, err := f.out.ReadString('\n'); err != nil || line != want {
		f.b.Fatalf("git fast-import answered %q, %v; want %q", line, err, want)
	}
}

func (f *fastImport) close() {
	io.WriteString(f.in, "done\n")
	f.in.Close()
	if err := f.cmd.Wait(); err != nil {
		f.b.Fatalf("git fast-import: %v", err)
	}
	// A baseline that lost its commits would be fast for nothing: main holds
	// the import and one commit per write.
	if got := commitCount(f.b, f.dir); got != f.before+f.n {
		f.b.Fatalf("main has %d commits after %d writes, want %d", got, f.n, f.before+f.n)
	}
}

// commitCount is the number of commits on main in the repository at dir.
func commitCount(b *testing.B, dir string) int {
	out, err := exec.Command("git", "-C", dir, "rev-list", "--count", "main").Output()
	if err != nil {
		b.Fatalf("git rev-list --count main: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		b.Fatalf("git rev-list --count main = %q", out)
	}
	return n
}
