package vault_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// longHistory is built once per process and format: 100,000 commits take
// seconds to pack and index, and are not what is measured.
var (
	historyOnce [2]sync.Once
	history     [2]vaulttest.History
)

func longHistory(b *testing.B) vaulttest.History { return longHistoryIn(b, false) }

// longHistoryIn is longHistory in the plain or the sealed format.
func longHistoryIn(b *testing.B, sealed bool) vaulttest.History {
	i, build := 0, vaulttest.BuildHistory
	if sealed {
		i, build = 1, vaulttest.BuildSealedHistory
	}
	historyOnce[i].Do(func() { history[i] = build(b, benchDir(b), 100_000, 100) })
	if history[i].Dir == "" {
		b.Fatal("building the history failed")
	}
	return history[i]
}

// BenchmarkHistory walks a history of 100,000 commits (100 files, each commit
// overwriting one): the first page of the log (target ≤ 50 ms) and one file's
// history, 1,000 of the commits (target ≤ 1 s), each against go-git's own Log
// (with a PathFilter for the file) on the same repository. The file's history
// is measured in an open vault and in a freshly opened one, as `memvault log
// PATH` runs it. go-git's file history takes minutes: -short skips it.
func BenchmarkHistory(b *testing.B) {
	h := longHistory(b)
	b.Logf("100,000 commits packed; completing the history index took %v", h.Indexing)
	opts := vault.Options{IdentityFile: h.IdentityFile}
	open := func(b *testing.B) *vault.Vault {
		v, err := vault.Open(context.Background(), h.Dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	logN := func(b *testing.B, v *vault.Vault, o vault.LogOptions, want int) {
		recs, err := v.Log(context.Background(), o)
		if err != nil || len(recs) != want {
			b.Fatalf("Log(%+v) = %d records, %v; want %d", o, len(recs), err, want)
		}
	}
	b.Run("first100/memvault", func(b *testing.B) {
		v := open(b)
		defer v.Close()
		for b.Loop() {
			logN(b, v, vault.LogOptions{Limit: 100}, 100)
		}
	})
	b.Run("first100/go-git", func(b *testing.B) {
		repo := gogit(b, h.Dir)
		for b.Loop() {
			iter, err := repo.Log(&git.LogOptions{From: plumbing.NewHash(h.Head)})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = iter.ForEach(func(*object.Commit) error {
				if n++; n == 100 {
					return storer.ErrStop
				}
				return nil
			})
			iter.Close()
			if err != nil || n != 100 {
				b.Fatalf("go-git's log walked %d commits, %v; want 100", n, err)
			}
		}
	})
	want := 100_000/h.Files + 1 // its edits and the import
	b.Run("file/memvault", func(b *testing.B) {
		v := open(b)
		defer v.Close()
		for b.Loop() {
			logN(b, v, vault.LogOptions{Path: h.File}, want)
		}
	})
	b.Run("file/memvault-open", func(b *testing.B) {
		for b.Loop() {
			v := open(b)
			logN(b, v, vault.LogOptions{Path: h.File}, want)
			v.Close()
		}
	})
	b.Run("file/go-git", func(b *testing.B) {
		if testing.Short() {
			b.Skip("go-git's path-filtered log takes minutes over 100,000 commits")
		}
		repo := gogit(b, h.Dir)
		tp := h.File[1:]
		for b.Loop() {
			iter, err := repo.Log(&git.LogOptions{From: plumbing.NewHash(h.Head), PathFilter: func(p string) bool { return p == tp }})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = iter.ForEach(func(*object.Commit) error { n++; return nil })
			iter.Close()
			if err != nil || n != want {
				b.Fatalf("go-git found %d commits, %v; want %d", n, err, want)
			}
		}
	})
}

func gogit(b *testing.B, dir string) *git.Repository {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	return repo
}

// indexCommits sizes BenchmarkIndexHistory's history.
var indexCommits = flag.Int("index.commits", 20_000, "BenchmarkIndexHistory: how many commits")

// BenchmarkIndexHistory completes the history index of 20,000 commits that
// arrived from elsewhere (one pack, as a clone brings them), from an empty
// index: what the first per-file history after a clone costs.
//
//	go test ./vault -run '^$' -bench BenchmarkIndexHistory -benchtime 3x -count 5
//	go test ./vault -run '^$' -bench BenchmarkIndexHistory -benchtime 1x -count 3 -index.commits 100000
func BenchmarkIndexHistory(b *testing.B) {
	h := vaulttest.BuildHistory(b, b.TempDir(), *indexCommits, 100)
	head, err := gitlog.ParseHash(h.Head)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		if err := os.Remove(filepath.Join(h.Dir, "memvault", "history-index")); err != nil {
			b.Fatal(err)
		}
		r, err := gitlog.Open(h.Dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := r.IndexHistory(context.Background(), head); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		r.Close()
		b.StartTimer()
	}
}
