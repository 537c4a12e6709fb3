package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
)

// TestTransferCredentials: the command line alone reads the
// transfer's credentials from the environment: a flag before a variable,
// $MEMVAULT_GIT_PASSWORD before $MEMVAULT_GIT_TOKEN, and the environment's user
// for https only, so an ssh URL keeps its own user.
func TestTransferCredentials(t *testing.T) {
	tests := []struct {
		name     string
		username string
		env      map[string]string
		want     vault.Credentials
	}{
		{"nothing", "", nil, vault.Credentials{}},
		{"flag before variable", "u", map[string]string{"MEMVAULT_GIT_USERNAME": "eu", "MEMVAULT_GIT_TOKEN": "et"},
			vault.Credentials{Username: "u", SSHUser: "u", Password: "et"}},
		{"user from the environment, https only", "", map[string]string{"MEMVAULT_GIT_USERNAME": "eu", "MEMVAULT_GIT_PASSWORD": "ep"},
			vault.Credentials{Username: "eu", Password: "ep"}},
		{"password before token", "", map[string]string{"MEMVAULT_GIT_PASSWORD": "ep", "MEMVAULT_GIT_TOKEN": "et"},
			vault.Credentials{Password: "ep"}},
		{"a token alone", "", map[string]string{"MEMVAULT_GIT_TOKEN": "et"}, vault.Credentials{Password: "et"}},
	}
	for _, tt := range tests {
		getenv := func(k string) string { return tt.env[k] }
		got := transferCredentials(tt.username, "key", "hosts", getenv)
		tt.want.SSHKeyFile, tt.want.KnownHostsFile = "key", "hosts"
		if got != tt.want {
			t.Errorf("%s: transferCredentials(%q) = %+v, want %+v", tt.name, tt.username,
				[]string{got.Username, got.Password, got.SSHUser}, []string{tt.want.Username, tt.want.Password, tt.want.SSHUser})
		}
	}
}

// TestSyncTokenFromEnvironment: `memvault sync` against an https
// remote that wants a token works with the token in $MEMVAULT_GIT_TOKEN and
// the user in $MEMVAULT_GIT_USERNAME, and with a wrong token exits with status
// 2, the credentials hint and no token in what it prints. No credential helper
// is configured, so the environment is the only source.
func TestSyncTokenFromEnvironment(t *testing.T) {
	url := gittest.HTTP(t, "agent", "good-token")
	root := t.TempDir()
	p := newProcess(t, root)
	p.env = append(p.env, "GIT_CONFIG_GLOBAL="+filepath.Join(root, "no-gitconfig"), "GIT_CONFIG_NOSYSTEM=1")
	p.run(t, "", "init")
	p.tool(t, map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "one\n"})
	p.run(t, "", "remote", "add", "origin", url)
	sync := func(user, token string) (int, string) {
		cmd := exec.Command(p.exe, "sync")
		cmd.Env = append(p.env[:len(p.env):len(p.env)], "MEMVAULT_GIT_USERNAME="+user, "MEMVAULT_GIT_TOKEN="+token)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, stderr.String()
		case errors.As(err, &exit):
			return exit.ExitCode(), stderr.String()
		}
		t.Fatal(err)
		return 0, ""
	}
	if code, stderr := sync("agent", "wrong-token"); code != exitSetup || !strings.Contains(stderr, "MEMVAULT_GIT_TOKEN") || strings.Contains(stderr, "wrong-token") {
		t.Errorf("memvault sync with a wrong token: status %d, stderr %q; want status %d, the credentials hint, and no token", code, stderr, exitSetup)
	}
	if code, stderr := sync("agent", "good-token"); code != 0 {
		t.Fatalf("memvault sync with the token in the environment: status %d, stderr %q", code, stderr)
	}
	// git itself, with the token in the URL, says what the server holds.
	out, err := exec.Command("git", "ls-remote", strings.Replace(url, "http://", "http://agent:good-token@", 1), "refs/heads/main").Output()
	if err != nil {
		t.Fatalf("git ls-remote: %v", err)
	}
	if got, want := strings.Fields(string(out)), vaultHead(t, p.vault); len(got) == 0 || got[0] != want {
		t.Errorf("after the sync the server's main is %q, want the vault's head %s", out, want)
	}
}
