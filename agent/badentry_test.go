package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestViewDamagedVault holds through the memory tool: in a vault
// changed by hand with git, a view of /memories lists every good file; a view
// of a bad one answers with the file and the real reason, not the identity.
func TestViewDamagedVault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Plain: the bad entries are written with git at plain names; a sealed
	// vault refuses those as names that do not open (vault's
	// TestSealedHostileEntries), before the reasons checked here.
	v, opts := vaulttest.NewPlainAt(t, dir)
	h := agent.New(agent.Vault(v), agent.Options{})
	for _, p := range []string{"/memories/a.md", "/memories/notes/b.md"} {
		if a, err := h.Run(ctx, []byte(`{"command":"create","path":"`+p+`","file_text":"hello\n"}`), "t"); err != nil || a.IsError {
			t.Fatalf("create %s: %+v, %v", p, a, err)
		}
	}
	v.Close()
	git := gittest.Damage(t, filepath.Join(dir, "vault.git"))
	root := git.Head() + "^{tree}"
	age := git.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))
	tree := git.Set(root, "memories/plain.md", gittest.TreeEntry{Mode: "100644", Hash: git.Blob([]byte("in the clear\n"))})
	tree = git.Set(tree, "memories/notes/link", gittest.TreeEntry{Mode: "120000", Hash: git.Blob([]byte("/etc/passwd"))})
	tree = git.Set(tree, "memories/sub", gittest.TreeEntry{Mode: "40000", Hash: age}) // a "directory" that is a blob
	tree = git.Set(tree, "memories/evil", gittest.TreeEntry{Mode: "100644", Name: "x\n4K\t/memories/fake", Hash: age})
	tree = git.Set(tree, "memories/bomb.md", gittest.TreeEntry{Mode: "100644", Hash: git.Bomb([]byte("age-encryption.org/v1\n"), 64<<20)})
	git.Push(git.Commit(tree, "by hand\n", git.Head()))

	v, err := vault.Open(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h = agent.New(agent.Vault(v), agent.Options{})
	a, err := h.Run(ctx, []byte(`{"command":"view","path":"/memories"}`), "t")
	if err != nil || a.IsError {
		t.Fatalf("view /memories = %q, %v; want the listing", a.Content, err)
	}
	for _, want := range []string{"6B\t/memories/a.md", "6B\t/memories/notes/b.md", "\t/memories/sub/", "\t/memories/bomb.md"} {
		if !strings.Contains(a.Content, want) {
			t.Errorf("view /memories = %q, want a line %q", a.Content, want)
		}
	}
	if strings.Contains(a.Content, "fake") {
		t.Errorf("view /memories = %q: a name no memory path has reached the listing", a.Content)
	}
	for p, reason := range map[string]string{
		"/memories/plain.md":   "not an age file",
		"/memories/notes/link": "symbolic link",
		"/memories/bomb.md":    "larger than the vault's limit",
		"/memories/sub":        "another type",
	} {
		a, err := h.Run(ctx, []byte(`{"command":"view","path":"`+p+`"}`), "t")
		if err != nil || !a.IsError || !strings.Contains(a.Content, p) || !strings.Contains(a.Content, reason) || strings.Contains(a.Content, "decrypt") {
			t.Errorf("view %s = %q, %v; want an answer naming it and %q", p, a.Content, err, reason)
		}
	}
	// A write beside the bad entries still works.
	if a, err := h.Run(ctx, []byte(`{"command":"create","path":"/memories/c.md","file_text":"c"}`), "t"); err != nil || a.IsError {
		t.Errorf("create beside bad entries = %+v, %v", a, err)
	}
}
