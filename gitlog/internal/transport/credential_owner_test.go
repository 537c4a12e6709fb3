//go:build unix

package transport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestCredentialHelperNeedsOwnFolder: a vault folder from elsewhere (a
// checkout, a backup, a folder another user can write) named a
// credential.helper in its config, and sync ran it, as root; plain git
// refuses such a folder ("detected dubious ownership"). The folder here is
// made, and its helper named, by another account's own git (uid 65534,
// through setpriv): that helper never runs. Once the folder is the user's
// own, its helper does.
func TestCredentialHelperNeedsOwnFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run git as another user with setpriv")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (Debian package util-linux), to run git as another user")
	}
	git := gittest.Git(t)
	shared := t.TempDir()
	// A folder everyone may write, as /tmp is, for the other user's vault
	// (the test's folder above it opened to get there).
	if err := os.Chmod(filepath.Dir(shared), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(shared, "foreign.git")
	marker := filepath.Join(t.TempDir(), "helper-ran")
	helper := "!f() { echo ran > " + marker + "; echo username=u; echo password=p; }; f"
	for _, args := range [][]string{{"init", "-q", "--bare", dir}, {"--git-dir", dir, "config", "credential.helper", helper}} {
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", git}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v as another user: %v\n%s", args, err, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "config")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Fatalf("the other user's config: %v, %v; want a file of uid 65534", fi, err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("SUDO_UID", "")
	ctx := context.Background()

	if c := fillCredential(ctx, dir, "https://example.invalid/x.git", ""); c != nil {
		t.Errorf("fillCredential in a folder another user made = %v, want nothing", c)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the credential.helper of a folder another user made ran")
	}

	if err := exec.Command("chown", "-R", "0:0", dir).Run(); err != nil {
		t.Fatal(err)
	}
	if c := fillCredential(ctx, dir, "https://example.invalid/x.git", ""); c == nil || c.password != "p" {
		t.Errorf("fillCredential in the user's own folder = %v, want the helper's answer", c)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the credential.helper of the user's own folder did not run: %v", err)
	}
}
