package vault_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
)

// TestSyncCredentialHelper: https credentials come from git's
// credential helper when no flag or variable gives them. Clone and sync work
// with them; a password the server refuses fails the sync with ErrAuth, moves
// nothing, is not quoted, and is taken out of the helper's store.
func TestSyncCredentialHelper(t *testing.T) {
	url := gittest.HTTP(t, "agent", "good-token")
	home := t.TempDir()
	store := filepath.Join(home, "credentials")
	config := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(config, []byte("[credential]\n\thelper = store --file="+store+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	setStore := func(pass string) {
		line := strings.Replace(url, "http://", "http://agent:"+pass+"@", 1) + "\n"
		if err := os.WriteFile(store, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", config)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"MEMVAULT_GIT_USERNAME", "MEMVAULT_GIT_PASSWORD", "MEMVAULT_GIT_TOKEN"} {
		t.Setenv(k, "")
	}

	setStore("good-token")
	a, b := pair(t, url) // a syncs, b clones: both through the helper
	write(t, a, "/memories/a.md", "from a\n")
	write(t, b, "/memories/b.md", "from b\n")
	mustSync(t, a)
	if res := mustSync(t, b); res.Action != "merge" || !res.Pushed {
		t.Errorf("Sync of b = %+v, want a merge pushed", res)
	}
	mustSync(t, a)
	if head(t, a) != head(t, b) || len(files(t, a)) != 2 {
		t.Fatalf("after syncing through the helper: heads %s %s, files %v", head(t, a), head(t, b), files(t, a))
	}

	setStore("stale-token")
	write(t, a, "/memories/c.md", "from a\n")
	before := head(t, a)
	_, err := a.Sync(ctx, vault.SyncOptions{})
	if !errors.Is(err, gitlog.ErrAuth) {
		t.Fatalf("Sync with a refused password from the helper = %v, want ErrAuth", err)
	}
	if strings.Contains(err.Error(), "stale-token") {
		t.Errorf("Sync's error quotes the password: %v", err)
	}
	if head(t, a) != before {
		t.Errorf("a refused sync moved the branch")
	}
	if b, err := os.ReadFile(store); err != nil && !errors.Is(err, fs.ErrNotExist) || strings.Contains(string(b), "stale-token") {
		t.Errorf("the refused password is still in the helper's store: git credential reject was not run")
	}
}
