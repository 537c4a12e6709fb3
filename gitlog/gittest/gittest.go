// Package gittest starts real git servers on loopback for tests: git daemon
// (git://) and git http-backend behind net/http/cgi (smart HTTP), each serving a
// new empty bare repository made with the git binary. A test that finds no git
// binary is skipped.
package gittest

import (
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Git returns the git binary, or skips the test.
func Git(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("git binary not found (%v): the loopback git servers need it", err)
	}
	return p
}

// Bare makes an empty bare repository root/name.git whose main branch is main
// and which takes pushes over HTTP, and returns its path.
func Bare(t testing.TB, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name+".git")
	for _, args := range [][]string{
		{"init", "--bare", "-q", dir},
		{"-C", dir, "config", "http.receivepack", "true"},
		{"-C", dir, "symbolic-ref", "HEAD", "refs/heads/main"},
	} {
		if out, err := exec.Command(Git(t), args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// Daemon starts git daemon on a free loopback port serving a new empty
// repository, and returns its git:// URL. The daemon is killed at cleanup.
func Daemon(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	Bare(t, root, "vault")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(Git(t), "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--base-path="+root, root)
	// A file, not a pipe: the daemon's children outlive it, and go test would
	// wait for a pipe they hold. Its own process group, so all of them are killed.
	logf, err := os.Create(filepath.Join(t.TempDir(), "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() {
		killGroup(cmd)
		cmd.Wait()
		logf.Close()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatalf("git daemon did not start on %s", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "git://" + addr + "/vault.git"
}

// HTTP serves a new empty repository through git http-backend on loopback and
// returns its URL. When user is not "", every request without user:pass in
// basic auth is answered 401.
func HTTP(t testing.TB, user, pass string) string {
	t.Helper()
	backend := Handler(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); user != "" && (!ok || u != user || p != pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="memvault test"`)
			http.Error(w, "credentials wanted", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/vault.git"
}

// Backend is git http-backend serving one repository, behind net/http/cgi.
type Backend struct{ cgi.Handler }

// ServeHTTP runs git http-backend for r without telling it r's Content-Length.
// Told a length, git (2.39 at least) reads the body in a loop that never ends
// when the body stops short of it, as it does when a client gives up in the
// middle of a push: the process spins at full CPU for ever, outliving the test,
// and the server's Close waits for it. Not told, git reads the body to its end
// and fails on a short one as on any other bad request.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > 0 {
		unsized := *r
		unsized.ContentLength = -1
		r = &unsized
	}
	b.Handler.ServeHTTP(w, r)
}

// Handler makes a new empty repository and returns git http-backend serving it
// at /vault.git, for a test's own server to wrap.
func Handler(t testing.TB) *Backend {
	t.Helper()
	root := t.TempDir()
	Bare(t, root, "vault")
	out, err := exec.Command(Git(t), "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not found: %v", err)
	}
	return &Backend{cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}}
}
