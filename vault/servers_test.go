package vault_test

import (
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog"
)

// Real git servers on loopback for the sync tests: a bare repository served as a
// local path (file://, in process), by git daemon (git://) and by git
// http-backend behind net/http/cgi (smart HTTP).

// gitBin returns the git binary or skips the test.
func gitBin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("git binary not found (%v): the loopback git servers need it", err)
	}
	return p
}

// bareRemote makes an empty bare repository under root/name.git with the git
// binary (http.receivepack on) and returns its path.
func bareRemote(t testing.TB, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name+".git")
	for _, args := range [][]string{
		{"init", "--bare", "-q", dir},
		{"-C", dir, "config", "http.receivepack", "true"},
		{"-C", dir, "symbolic-ref", "HEAD", "refs/heads/main"},
	} {
		if out, err := exec.Command(gitBin(t), args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// fileRemote is an empty bare repository reached by a file:// URL; it needs no
// git binary.
func fileRemote(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	r, err := gitlog.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	return "file://" + dir
}

// daemonRemote starts git daemon on a free loopback port serving a new empty
// repository, and returns its git:// URL. The daemon is killed at cleanup.
func daemonRemote(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	bareRemote(t, root, "vault")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(gitBin(t), "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--base-path="+root, root)
	// A file, not a pipe: the daemon's children outlive it, and go test would
	// wait for a pipe they hold. Its own process group, so all of them are killed.
	logf, err := os.Create(filepath.Join(t.TempDir(), "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
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

// httpRemote serves a new empty repository through git http-backend in an
// httptest server and returns its URL.
func httpRemote(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	bareRemote(t, root, "vault")
	out, err := exec.Command(gitBin(t), "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not found: %v", err)
	}
	srv := httptest.NewServer(&cgi.Handler{
		Path: backend,
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	})
	t.Cleanup(srv.Close)
	return srv.URL + "/vault.git"
}
