package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// otherUser returns a command that runs name with args as another local
// account (uid and gid 65534, no supplementary groups) through setpriv, or
// skips the test, saying why, when that cannot be done here.
func otherUser(t *testing.T) func(name string, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a process as another user with setpriv")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (Debian package util-linux), to run a process as another user")
	}
	return func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", name}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
		return cmd
	}
}

// TestMCPHTTPOtherUser: another account on the machine, a real process of
// uid 65534 started with setpriv, once read and wrote the memory through
// `memvault mcp --http` on loopback, which asked no token there. Now it
// cannot read the token file, and curl without the token, or with a guess,
// is refused, to read or to write; the same curl given the token gets in, so
// it is the token that keeps it out, not the path to the server.
func TestMCPHTTPOtherUser(t *testing.T) {
	as := otherUser(t)
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("needs curl, for the other user's client")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	config := t.TempDir()
	// The folders above the config folder are the test's (0700 from
	// TempDir): opened to everyone, so that what keeps the other user out
	// is what memvault made, the token file and its folder.
	for d := config; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	url, said := startMCPHTTP(t, ctx, config)
	said.ReadString('\n')
	said.ReadString('\n')
	file := filepath.Join(config, "memvault", "mcp-token")
	token, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	if out, err := as("cat", file).CombinedOutput(); err == nil || strings.Contains(string(out), strings.TrimSpace(string(token))) {
		t.Errorf("cat %s as another user: %v\n%s\nwant it refused", file, err, out)
	}
	post := func(auth, body string) string {
		t.Helper()
		args := []string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
			"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"}
		if auth != "" {
			args = append(args, "-H", "Authorization: "+auth)
		}
		out, err := as(curl, append(args, "--data-binary", body, url)...).Output()
		if err != nil {
			t.Fatalf("curl %s as another user: %v", url, err)
		}
		return string(out)
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other-user","version":"1"}}}`
	create := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/planted.md","file_text":"from another user"}}}`
	for _, auth := range []string{"", "Bearer ", "Bearer guess", "Bearer " + strings.Repeat("0", 64)} {
		for what, body := range map[string]string{"initialize": initialize, "create": create} {
			if code := post(auth, body); code != "401" {
				t.Errorf("%s from another user with Authorization %q: HTTP %s, want 401", what, auth, code)
			}
		}
	}
	if code := post("Bearer "+strings.TrimSpace(string(token)), initialize); code != "200" {
		t.Errorf("initialize from another user holding the token: HTTP %s, want 200 (the other user's curl must reach the server)", code)
	}
}
