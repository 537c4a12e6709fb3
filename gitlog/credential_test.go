package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/memvault/memvault/gitlog/gittest"
)

func TestCredentialRequest(t *testing.T) {
	tests := []struct {
		url, user string
		want      string // "" means not ok
	}{
		{"https://git.example.com/me/memory.git", "", "protocol=https\nhost=git.example.com\npath=me/memory.git\n\n"},
		{"http://127.0.0.1:8080/vault.git", "bob", "protocol=http\nhost=127.0.0.1:8080\npath=vault.git\nusername=bob\n\n"},
		{"https://alice@git.example.com", "alice", "protocol=https\nhost=git.example.com\nusername=alice\n\n"},
		{"https://git.example.com/x.git", "a\nb", ""},
		{"ssh://git@git.example.com/x.git", "", ""},
		{"git@git.example.com:x.git", "", ""},
		{"file:///tmp/x.git", "", ""},
		{"/tmp/x.git", "", ""},
	}
	for _, tt := range tests {
		got, ok := credentialRequest(tt.url, tt.user)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("credentialRequest(%q, %q) = %q, %t; want %q", tt.url, tt.user, got, ok, tt.want)
		}
	}
}

func TestCredentialHides(t *testing.T) {
	c := &credential{username: "u", password: "hunter2", lines: []string{"password=hunter2"}}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(f, c); strings.Contains(s, "hunter2") {
			t.Errorf("Sprintf(%q, credential) = %q, shows the password", f, s)
		}
	}
}

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
		if d := time.Since(start); d > credentialTimeout/2 {
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

// TestAuthMethodOrder: https credentials come from Auth, then the URL, with
// x-access-token as the user of a token alone; none gives no auth at all. The
// environment plays no part: the command line reads it.
func TestAuthMethodOrder(t *testing.T) {
	const url = "https://urluser:urlpass@git.example/v.git"
	tests := []struct {
		name               string
		auth               TransferOptions
		rawURL             string
		wantUser, wantPass string
		wantNone           bool
	}{
		{name: "Auth wins", auth: TransferOptions{Username: "u", Password: "p"}, rawURL: url, wantUser: "u", wantPass: "p"},
		{name: "a token alone", auth: TransferOptions{Password: "et"}, rawURL: "https://git.example/v.git", wantUser: "x-access-token", wantPass: "et"},
		{name: "the URL last", rawURL: url, wantUser: "urluser", wantPass: "urlpass"},
		{name: "a user alone is no password", auth: TransferOptions{Username: "u"}, rawURL: "https://git.example/v.git", wantNone: true},
		{name: "none", rawURL: "https://git.example/v.git", wantNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"MEMVAULT_GIT_USERNAME", "MEMVAULT_GIT_PASSWORD", "MEMVAULT_GIT_TOKEN"} {
				t.Setenv(k, "from-the-environment")
			}
			am, err := authMethod(tt.rawURL, tt.auth)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNone {
				if am != nil {
					t.Errorf("authMethod = %v, want none", am)
				}
				return
			}
			ba, ok := am.(*githttp.BasicAuth)
			if !ok || ba.Username != tt.wantUser || ba.Password != tt.wantPass {
				t.Errorf("authMethod = %#v, want basic auth %s:%s", am, tt.wantUser, tt.wantPass)
			}
		})
	}
}
