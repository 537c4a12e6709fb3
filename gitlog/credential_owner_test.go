//go:build unix

package gitlog

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestCredentialHelperNeedsOwnFolder: a vault folder from elsewhere (a
// checkout, a backup, a folder another user can write) named a
// credential.helper in its config, and sync ran it, as root; plain git
// refuses such a folder ("detected dubious ownership"). The helper of a
// folder this user does not own never runs; the user's own folder's does.
func TestCredentialHelperNeedsOwnFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the folder to another user")
	}
	git := gittest.Git(t)
	dir := filepath.Join(t.TempDir(), "foreign.git")
	marker := filepath.Join(t.TempDir(), "helper-ran")
	if out, err := exec.Command(git, "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	helper := "!f() { echo ran > " + marker + "; echo username=u; echo password=p; }; f"
	if out, err := exec.Command(git, "--git-dir", dir, "config", "credential.helper", helper).CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("SUDO_UID", "")
	ctx := context.Background()

	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if c := fillCredential(ctx, dir, "https://example.invalid/x.git", ""); c != nil {
		t.Errorf("fillCredential in a folder of another user = %v, want nothing", c)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the credential.helper of a folder owned by another user ran")
	}

	if err := os.Chown(dir, 0, 0); err != nil {
		t.Fatal(err)
	}
	if c := fillCredential(ctx, dir, "https://example.invalid/x.git", ""); c == nil || c.password != "p" {
		t.Errorf("fillCredential in the user's own folder = %v, want the helper's answer", c)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the credential.helper of the user's own folder did not run: %v", err)
	}
}
