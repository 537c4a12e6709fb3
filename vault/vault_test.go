package vault_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var ctx = context.Background()

func write(t *testing.T, v *vault.Vault, p, content string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "create", ToolUseID: "toolu_1"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, p, []byte(content))
	})
	if err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// read reads p at main; a snapshot that fails (in a sealed vault, for an
// identity that cannot open the vault key) fails the read.
func read(t *testing.T, v *vault.Vault, p string) (string, error) {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		return "", err
	}
	b, err := s.ReadFile(ctx, p)
	return string(b), err
}

func TestReadWriteRoundTrip(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/notes/a.md", "hello\n")
	if got, err := read(t, v, "/memories/notes/a.md"); err != nil || got != "hello\n" {
		t.Errorf("ReadFile = %q, %v; want %q", got, err, "hello\n")
	}
	s, _ := v.Snapshot(ctx)
	for p, want := range map[string]vault.Kind{
		"/memories": vault.KindDir, "/memories/notes": vault.KindDir,
		"/memories/notes/a.md": vault.KindFile, "/memories/nope": vault.KindNone,
		"/memories/notes/a.md/x": vault.KindNone,
	} {
		if got, err := s.Stat(p); err != nil || got != want {
			t.Errorf("Stat(%q) = %v, %v; want %v", p, got, err, want)
		}
	}
	if _, err := s.ReadFile(ctx, "/memories/notes"); !errors.Is(err, vault.ErrIsDir) {
		t.Errorf("ReadFile(dir) err = %v, want ErrIsDir", err)
	}
	if _, err := s.ReadFile(ctx, "/memories/x"); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("ReadFile(missing) err = %v, want ErrNotExist", err)
	}
	if _, err := s.ReadFile(ctx, "/memories/../x"); err == nil {
		t.Errorf("ReadFile(escape) succeeded")
	}
}

func TestListSizesWithoutDecrypting(t *testing.T) {
	dir := t.TempDir()
	// Plain: a sealed vault's names, and the sizes kept in them, open only
	// under its key, which needs the identity.
	v, opts := vaulttest.NewPlainAt(t, dir)
	sizes := map[string]int{"a": 0, "b": 1023, "c": 1024, "d": 65536, "e": 65537, "f": 200000}
	for name, n := range sizes {
		write(t, v, "/memories/"+name, strings.Repeat("x", n))
	}
	write(t, v, "/memories/.hidden/z", "z")
	// A fresh process without the identity still lists sizes.
	os.Rename(opts.IdentityFile, opts.IdentityFile+".away")
	v2, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	s, _ := v2.Snapshot(ctx)
	es, err := s.List(ctx, "/memories")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name)
		if !e.Dir && e.Size != int64(sizes[e.Name]) {
			t.Errorf("List size of %s = %d, want %d", e.Name, e.Size, sizes[e.Name])
		}
	}
	if got := strings.Join(names, " "); got != ".hidden a b c d e f" {
		t.Errorf("List names = %q", got)
	}
	_, err = s.ReadFile(ctx, "/memories/a")
	if !errors.Is(err, vault.ErrNoIdentity) || !strings.Contains(err.Error(), opts.IdentityFile) {
		t.Errorf("ReadFile without identity: err = %v, want ErrNoIdentity naming %s", err, opts.IdentityFile)
	}
}

func TestWrongIdentity(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/a", "secret")
	other := filepath.Join(t.TempDir(), "other")
	v2, _, err := vault.Init(ctx, filepath.Join(t.TempDir(), "v.git"), vault.Options{IdentityFile: other})
	if err != nil {
		t.Fatal(err)
	}
	v2.Close()
	v3, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: other})
	if err != nil {
		t.Fatal(err)
	}
	defer v3.Close()
	_, err = read(t, v3, "/memories/a") // in a sealed vault, the snapshot fails: the key does not open
	if !errors.Is(err, vault.ErrDecrypt) || !strings.Contains(err.Error(), other) {
		t.Errorf("ReadFile with another identity: err = %v, want ErrDecrypt naming %s", err, other)
	}
	if fi, err := os.Stat(other); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("identity mode = %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestTxErrorsChangeNothing(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/f", "1")
	write(t, v, "/memories/d/g", "2")
	before := mustLog(t, v)
	cases := []struct {
		name string
		fn   func(tx *vault.Tx) error
		want error
	}{
		{"write under a file", func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/f/x", nil) }, vault.ErrNotDir},
		{"write over a dir", func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/d", nil) }, vault.ErrIsDir},
		{"write the root", func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories", nil) }, vault.ErrIsDir},
		{"too large", func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/big", make([]byte, 1<<20+1)) }, vault.ErrTooLarge},
		{"remove missing", func(tx *vault.Tx) error { return tx.Remove("/memories/nope") }, vault.ErrNotExist},
		{"remove root", func(tx *vault.Tx) error { return tx.Remove("/memories") }, vault.ErrRoot},
		{"rename onto existing", func(tx *vault.Tx) error { return tx.Rename("/memories/f", "/memories/d/g") }, vault.ErrExist},
		{"rename into itself", func(tx *vault.Tx) error { return tx.Rename("/memories/d", "/memories/d/e") }, vault.ErrInvalid},
		{"rename under a file", func(tx *vault.Tx) error { return tx.Rename("/memories/d", "/memories/f/e") }, vault.ErrNotDir},
		{"rename missing", func(tx *vault.Tx) error { return tx.Rename("/memories/x", "/memories/y") }, vault.ErrNotExist},
	}
	for _, c := range cases {
		err := v.Update(ctx, vault.Meta{Command: "x"}, c.fn)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	after := mustLog(t, v)
	if len(after) != len(before) {
		t.Errorf("failed updates made %d commits", len(after)-len(before))
	}
}

func TestCommitTrailersAndLog(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/a", "1")
	err := v.Update(ctx, vault.Meta{Command: "rename", ToolUseID: "toolu_9", Agent: "claude", Session: "s1"}, func(tx *vault.Tx) error {
		return tx.Rename("/memories/a", "/memories/dir/b")
	})
	if err != nil {
		t.Fatal(err)
	}
	write(t, v, "/memories/c", "2")
	recs, err := v.Log(ctx, vault.LogOptions{})
	if err != nil || len(recs) != 4 {
		t.Fatalf("Log = %d records, %v; want 4", len(recs), err)
	}
	r := recs[1]
	want := vault.Record{Command: "rename", Path: "/memories/a", NewPath: "/memories/dir/b", ToolUseID: "toolu_9",
		Agent: "claude", Session: "s1", Subject: "rename /memories/a -> /memories/dir/b", Author: "claude"}
	if r.Command != want.Command || r.Path != want.Path || r.NewPath != want.NewPath || r.ToolUseID != want.ToolUseID ||
		r.Agent != want.Agent || r.Session != want.Session || r.Subject != want.Subject || r.Author != want.Author {
		t.Errorf("rename record = %+v, want %+v", r, want)
	}
	if recs[3].Command != "init" || len(recs[3].Parents) != 0 {
		t.Errorf("first record = %+v, want the init commit", recs[3])
	}
	byPath := vaulttest.Log(t, v, vault.LogOptions{Path: "/memories/dir"})
	if len(byPath) != 1 || byPath[0].Command != "rename" {
		t.Errorf("Log(/memories/dir) = %+v, want the rename only", byPath)
	}
	limited := vaulttest.Log(t, v, vault.LogOptions{Limit: 2})
	if len(limited) != 2 || limited[0].Path != "/memories/c" {
		t.Errorf("Log(Limit 2) = %+v", limited)
	}
}

// TestNoPlaintextInRepository reads every file of the vault, decompressing loose
// objects, and looks for a marker written through the vault.
func TestNoPlaintextInRepository(t *testing.T) {
	v := vaulttest.New(t)
	marker := "MARKER-7f3a9c2e-plaintext"
	write(t, v, "/memories/secret.md", "the marker is "+marker)
	if got, _ := read(t, v, "/memories/secret.md"); !strings.Contains(got, marker) {
		t.Fatalf("marker not readable through the vault: %q", got)
	}
	found := vaulttest.FindInRepo(t, v.Dir(), []byte(marker))
	if len(found) > 0 {
		t.Errorf("plaintext marker found on disk in %v", found)
	}
	// The vault is sealed: the file's name is not there either, and the
	// name of the recipients file, in the clear in every tree, is.
	if found := vaulttest.FindInRepo(t, v.Dir(), []byte("secret.md")); len(found) > 0 {
		t.Errorf("the file's name found on disk in %v", found)
	}
	if found := vaulttest.FindInRepo(t, v.Dir(), []byte("recipients")); len(found) == 0 {
		t.Errorf("the search finds nothing at all (.memvault/recipients should be in a tree object): the test cannot fail")
	}
}

// TestAgentCannotForgeAuthor pins the fix for an agent name that wrote its own
// email and time into the author line (found while building the MCP server).
func TestAgentCannotForgeAuthor(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not on PATH")
	}
	// Plain: the author line git reads is the agent's there; a sealed
	// vault's is memvault's, the agent sealed in the message.
	v, _ := vaulttest.NewPlainAt(t, t.TempDir())
	err := v.Update(ctx, vault.Meta{Command: "create", Agent: "evil <x@y> 1 +0000"}, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/a", []byte("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Flush(ctx); err != nil { // for git to see its objects
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", v.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	out, _ := exec.Command("git", "-C", v.Dir(), "log", "-1", "--format=%an|%ae", "main").Output()
	if got := strings.TrimSpace(string(out)); got != "evil x@y 1 +0000|agent@memvault" {
		t.Errorf("author = %q, want the name without angle brackets and memvault's email", got)
	}
}
