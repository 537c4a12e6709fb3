package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

// silentServer accepts TCP connections on loopback and never answers, as a
// stalled git host does. It returns the address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// stallingServer is a smart-HTTP git server that stalls. Under /trickle/ it
// answers a fetch's ref advertisement one byte every 50 ms, forever: a transfer
// that has started and never ends. Under /push/ it advertises an empty
// repository to a fetch, so a push comes next, and never answers the push.
func stallingServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/push/") {
			if r.URL.Query().Get("service") == "git-upload-pack" {
				w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
				io.WriteString(w, "001e# service=git-upload-pack\n00000000")
				return
			}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		w.WriteHeader(http.StatusOK)
		line := []byte("001e# service=git-upload-pack\n0000")
		for i := 0; ; i++ {
			if _, err := w.Write(line[i%len(line) : i%len(line)+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTransferTimeout: push, pull, sync and clone against a server that
// stalls give up after --timeout, exit with status 2 saying so and what to do,
// and leave the vault's branch where it was.
func TestTransferTimeout(t *testing.T) {
	silent := silentServer(t)
	stalling := stallingServer(t)
	root := t.TempDir()
	p := newProcess(t, root)
	p.run(t, "", "init")
	p.tool(t, map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "one\n"})
	before := vaultHead(t, p.vault)
	clone := filepath.Join(root, "clone.git")
	tests := []struct {
		name, url string
		args      []string
	}{
		{"sync, silent http", "http://" + silent + "/vault.git", []string{"sync", "--timeout", "300ms", "silenthttp"}},
		{"sync, silent git://", "git://" + silent + "/vault.git", []string{"sync", "--timeout", "300ms", "silentgit"}},
		{"pull, trickling http", stalling + "/trickle/vault.git", []string{"pull", "--timeout", "300ms", "trickle"}},
		{"push, stalling http", stalling + "/push/vault.git", []string{"push", "--timeout", "300ms", "stallpush"}},
		{"clone, silent http", "", []string{"clone", "--timeout", "300ms", "http://" + silent + "/vault.git", clone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.url != "" {
				p.run(t, "", "remote", "add", tt.args[len(tt.args)-1], tt.url)
			}
			// A regression must fail the test, not hang it.
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(cctx, p.exe, tt.args...)
			cmd.Env = p.env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitSetup {
				t.Errorf("memvault %s: %v, want exit status %d", strings.Join(tt.args, " "), err, exitSetup)
			}
			// 300 ms, plus a process start and a loaded 2-core machine.
			if took > 10*time.Second {
				t.Errorf("memvault %s took %v, want it to give up soon after 300ms", strings.Join(tt.args, " "), took)
			}
			for _, want := range []string{"--timeout 300ms", vault.ErrTimeout.Error(), "allow more time with --timeout"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("memvault %s printed %q, want it to say %q", strings.Join(tt.args, " "), stderr.String(), want)
				}
			}
			if got := vaultHead(t, p.vault); got != before {
				t.Errorf("after a timed-out %s the vault's head is %s, want %s", tt.args[0], got, before)
			}
		})
	}
	if _, err := os.Stat(clone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a timed-out clone left %s behind", clone)
	}
}

// vaultHead reads the main branch of the vault at dir, with git itself.
func vaultHead(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "rev-parse", "--verify", "refs/heads/main").Output()
	if err != nil {
		t.Fatalf("git rev-parse main in %s: %v", dir, err)
	}
	return strings.TrimSpace(string(out))
}

// TestGaveUpAfter: the CLI names the --timeout limit in an error that wraps
// vault.ErrTimeout once the limit's deadline passed, and leaves every other
// error as it is: wrapping ErrTimeout is vault's work.
func TestGaveUpAfter(t *testing.T) {
	expired, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	live := context.Background()
	timeout := fmt.Errorf("vault: sync: %w", vault.ErrTimeout)
	other := errors.New("disk on fire")
	tests := []struct {
		name     string
		ctx      context.Context
		err      error
		wantName bool
	}{
		{"no error", expired, nil, false},
		{"timed out at the limit", expired, timeout, true},
		{"a network timeout before the limit", live, timeout, false},
		{"other error, deadline passed", expired, other, false},
		{"interrupted", cancelled, fmt.Errorf("vault: sync: %w", context.Canceled), false},
	}
	for _, tt := range tests {
		got := gaveUpAfter(tt.ctx, time.Second, tt.err)
		switch {
		case tt.wantName && (!errors.Is(got, vault.ErrTimeout) || !strings.Contains(got.Error(), "--timeout 1s")):
			t.Errorf("%s: gaveUpAfter(%v) = %v, want it to wrap ErrTimeout and name --timeout 1s", tt.name, tt.err, got)
		case !tt.wantName && got != tt.err:
			t.Errorf("%s: gaveUpAfter(%v) = %v, want it unchanged", tt.name, tt.err, got)
		}
	}
}
