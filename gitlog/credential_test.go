package gitlog

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
)

// helperSetup gives git a global config of its own (the user's is never read)
// whose credential helpers are a logger, writing each action it is asked for to
// the returned log file, and, when store is not "", git's store helper holding
// that line. It returns the log and the store helper's file.
func helperSetup(t *testing.T, store string) (logFile, storeFile string) {
	t.Helper()
	dir := t.TempDir()
	logFile = filepath.Join(dir, "helper.log")
	storeFile = filepath.Join(dir, "store")
	cfg := "[credential]\n\thelper = " + loggingHelper(t, logFile) + "\n"
	if store != "" {
		if err := os.WriteFile(storeFile, []byte(store+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += "\thelper = store --file=" + storeFile + "\n"
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return logFile, storeFile
}

// loggingHelper writes a credential helper that appends its arguments (the
// action: get, store or erase) to logFile and answers nothing, and returns its
// path, which git runs as it is.
func loggingHelper(t *testing.T, logFile string) string {
	t.Helper()
	helper := filepath.Join(t.TempDir(), "logger.sh")
	script := "#!/bin/sh\necho \"$*\" >> '" + logFile + "'\ncat > /dev/null\n"
	if err := os.WriteFile(helper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return helper
}

func readLog(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\n", " "))
}

// newPushRepo makes a repository with one commit and origin at url.
func newPushRepo(t *testing.T, url string) (*Repo, Hash) {
	t.Helper()
	r := newFetchRepo(t, url)
	return r, commit(t, r, Change{Op: Put, Path: "m/a.txt", Data: []byte("one")})
}

// newFetchRepo makes an empty repository with origin at url.
func newFetchRepo(t *testing.T, url string) *Repo {
	t.Helper()
	r, err := Init(filepath.Join(t.TempDir(), "local.git"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCredentialHelper pushes to and fetches from a smart-HTTP server that wants
// basic auth, with credentials from git's credential helpers only: they are asked
// only when the server demands it, told to keep credentials that worked and to
// forget ones that were refused, and the password shows in no error.
func TestCredentialHelper(t *testing.T) {
	ctx := context.Background()
	t.Run("helper has it", func(t *testing.T) {
		url := gittest.HTTP(t, "alice", "right-pass")
		logFile, storeFile := helperSetup(t, strings.Replace(url, "http://", "http://alice:right-pass@", 1))
		r, h := newPushRepo(t, url)
		if err := r.Push(ctx, "origin", h, TransferOptions{}); err != nil {
			t.Fatalf("Push with the helper's credentials: %v", err)
		}
		other := newFetchRepo(t, url)
		if got, err := other.Fetch(ctx, "origin", TransferOptions{}); err != nil || got != h {
			t.Fatalf("Fetch with the helper's credentials = %s, %v; want %s", got, err, h)
		}
		if got, want := readLog(t, logFile), "get store get store"; got != want {
			t.Errorf("the helpers were asked %q, want %q (fill and approve, for push and fetch)", got, want)
		}
		if b, err := os.ReadFile(storeFile); err != nil || !strings.Contains(string(b), "right-pass") {
			t.Errorf("the store helper's file lost the working credential: %q (%v)", b, err)
		}
	})
	t.Run("helper has a wrong one", func(t *testing.T) {
		url := gittest.HTTP(t, "alice", "right-pass")
		logFile, storeFile := helperSetup(t, strings.Replace(url, "http://", "http://alice:stale-pass@", 1))
		r, h := newPushRepo(t, url)
		err := r.Push(ctx, "origin", h, TransferOptions{})
		if !errors.Is(err, ErrAuth) {
			t.Fatalf("Push with a refused credential = %v, want ErrAuth", err)
		}
		if strings.Contains(err.Error(), "stale-pass") {
			t.Errorf("Push's error shows the password: %v", err)
		}
		if got, want := readLog(t, logFile), "get erase"; got != want {
			t.Errorf("the helpers were asked %q, want %q (fill, then reject)", got, want)
		}
		if b, err := os.ReadFile(storeFile); err != nil && !errors.Is(err, fs.ErrNotExist) || strings.Contains(string(b), "stale-pass") {
			t.Errorf("the store helper still holds the refused credential: %q (%v)", b, err)
		}
		if cur, err := r.Ref(RemoteRef("origin")); err != nil || !cur.IsZero() {
			t.Errorf("a refused push moved %s to %s (%v)", RemoteRef("origin"), cur, err)
		}
	})
	t.Run("no helper answers", func(t *testing.T) {
		url := gittest.HTTP(t, "alice", "right-pass")
		logFile, _ := helperSetup(t, "")
		// git would fall back on an askpass program, which could open a
		// dialog nobody answers; it must not be started.
		askpass := filepath.Join(t.TempDir(), "askpass.sh")
		script := "#!/bin/sh\necho askpass >> '" + logFile + "'\necho right-pass\n"
		if err := os.WriteFile(askpass, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SSH_ASKPASS", askpass)
		t.Setenv("GIT_ASKPASS", "")
		os.Unsetenv("GIT_ASKPASS")
		r := newFetchRepo(t, url)
		start := time.Now()
		if _, err := r.Fetch(ctx, "origin", TransferOptions{}); !errors.Is(err, ErrAuth) {
			t.Fatalf("Fetch with no credentials anywhere = %v, want ErrAuth", err)
		}
		if d := time.Since(start); d > 5*time.Second { // half the transport's credentialTimeout
			t.Errorf("Fetch took %v: git waited for a prompt?", d)
		}
		if got, want := readLog(t, logFile), "get"; got != want {
			t.Errorf("the helpers were asked %q, want %q", got, want)
		}
	})
	t.Run("server wants none", func(t *testing.T) {
		url := gittest.HTTP(t, "", "")
		logFile, _ := helperSetup(t, strings.Replace(url, "http://", "http://alice:right-pass@", 1))
		r, h := newPushRepo(t, url)
		if err := r.Push(ctx, "origin", h, TransferOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Fetch(ctx, "origin", TransferOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := readLog(t, logFile); got != "" {
			t.Errorf("the helpers were asked %q for a server that wants no credentials, want nothing", got)
		}
	})
	t.Run("given credentials win", func(t *testing.T) {
		// As in git, a password given explicitly is used alone: a refusal is
		// final, and the helpers' store is left alone.
		url := gittest.HTTP(t, "alice", "right-pass")
		logFile, _ := helperSetup(t, strings.Replace(url, "http://", "http://alice:right-pass@", 1))
		r, h := newPushRepo(t, url)
		err := r.Push(ctx, "origin", h, TransferOptions{Username: "alice", Password: "typo-pass"})
		if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "typo-pass") {
			t.Errorf("Push with a wrong --username/password = %v, want ErrAuth without the password", err)
		}
		if got := readLog(t, logFile); got != "" {
			t.Errorf("the helpers were asked %q though a password was given, want nothing", got)
		}
	})
	t.Run("username passed on", func(t *testing.T) {
		// The store holds two users; the one named by Auth is the one taken.
		url := gittest.HTTP(t, "bob", "bobs-pass")
		helperSetup(t, strings.Replace(url, "http://", "http://alice:right-pass@", 1)+"\n"+
			strings.Replace(url, "http://", "http://bob:bobs-pass@", 1))
		r, h := newPushRepo(t, url)
		if err := r.Push(ctx, "origin", h, TransferOptions{Username: "bob"}); err != nil {
			t.Errorf("Push as bob with the helper's credentials: %v", err)
		}
	})
	t.Run("helper in the vault's config", func(t *testing.T) {
		url := gittest.HTTP(t, "alice", "right-pass")
		_, storeFile := helperSetup(t, "") // globally, only the logger
		line := strings.Replace(url, "http://", "http://alice:right-pass@", 1) + "\n"
		if err := os.WriteFile(storeFile, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		r, h := newPushRepo(t, url)
		gitConfig(t, r.Dir(), "credential.helper", "store --file="+storeFile)
		if err := r.Push(ctx, "origin", h, TransferOptions{}); err != nil {
			t.Errorf("Push with a helper set in the repository's own config: %v", err)
		}
	})
	t.Run("not the working directory's repository", func(t *testing.T) {
		// A repository the process merely runs in (a project an agent works
		// on) must not choose a helper, which would be handed the password.
		url := gittest.HTTP(t, "alice", "right-pass")
		logFile, _ := helperSetup(t, strings.Replace(url, "http://", "http://alice:right-pass@", 1))
		cwd := filepath.Join(t.TempDir(), "project")
		if out, err := exec.Command("git", "init", "-q", cwd).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		strangerLog := filepath.Join(t.TempDir(), "stranger.log")
		gitConfig(t, cwd, "credential.helper", loggingHelper(t, strangerLog))
		t.Chdir(cwd)
		r, h := newPushRepo(t, url)
		if err := r.Push(ctx, "origin", h, TransferOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := readLog(t, strangerLog); got != "" {
			t.Errorf("the working directory's helper was asked %q, want nothing", got)
		}
		if got := readLog(t, logFile); got != "get store" {
			t.Errorf("the global helpers were asked %q, want %q", got, "get store")
		}
	})
	t.Run("no git binary", func(t *testing.T) {
		url := gittest.HTTP(t, "alice", "right-pass")
		helperSetup(t, strings.Replace(url, "http://", "http://alice:right-pass@", 1))
		r, h := newPushRepo(t, url)
		t.Setenv("PATH", t.TempDir())
		if err := r.Push(ctx, "origin", h, TransferOptions{}); !errors.Is(err, ErrAuth) {
			t.Errorf("Push without git on PATH = %v, want ErrAuth (the helper source skipped)", err)
		}
	})
}

// gitConfig sets key to value in the config of the repository at dir.
func gitConfig(t *testing.T, dir, key, value string) {
	t.Helper()
	if out, err := exec.Command("git", "-C", dir, "config", key, value).CombinedOutput(); err != nil {
		t.Fatalf("git config %s: %v\n%s", key, err, out)
	}
}
