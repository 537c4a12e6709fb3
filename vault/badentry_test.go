package vault_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// bombSize is the size the header of the zlib bomb in the read tests claims:
// far over the limit, small enough to write in a test (64 KB of zlib).
const bombSize = 64 << 20

// damageCase is one entry someone put into a vault with git by hand, the name
// it has in a listing of /memories ("" when it is no memory name), and the
// phrase a read of it must hold.
type damageCase struct {
	name   string
	entry  func(h *gittest.Hostile) (path string, e gittest.TreeEntry)
	listed string
	reason string
}

func damageCases() []damageCase {
	ageBlob := func(h *gittest.Hostile) string {
		return h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))
	}
	at := func(p, mode string, blob func(h *gittest.Hostile) string) func(h *gittest.Hostile) (string, gittest.TreeEntry) {
		return func(h *gittest.Hostile) (string, gittest.TreeEntry) {
			return p, gittest.TreeEntry{Mode: mode, Hash: blob(h)}
		}
	}
	named := func(name string) func(h *gittest.Hostile) (string, gittest.TreeEntry) {
		return func(h *gittest.Hostile) (string, gittest.TreeEntry) {
			return "memories/x", gittest.TreeEntry{Mode: "100644", Name: name, Hash: ageBlob(h)}
		}
	}
	return []damageCase{
		{"plaintext", at("memories/evil.md", "100644", func(h *gittest.Hostile) string { return h.Blob([]byte("secret in the clear\n")) }), "evil.md", "not an age file"},
		{"symlink", at("memories/link", "120000", func(h *gittest.Hostile) string { return h.Blob([]byte("/etc/passwd")) }), "link", "symbolic link"},
		{"gitlink", at("memories/sub", "160000", func(h *gittest.Hostile) string { return h.Head() }), "sub", "gitlink"},
		{"executable", at("memories/run", "100755", ageBlob), "run", "executable"},
		{"dir is a blob", at("memories/d", "40000", ageBlob), "d", "another type"},
		{"newline", named("a\nb"), "", "control character"},
		{"dotdot", named(".."), "", `".." name`},
		{"dot git", named(".GiT"), "", "reserved name"},
		{"zlib bomb", at("memories/bomb.md", "100644", func(h *gittest.Hostile) string {
			return h.Bomb([]byte("age-encryption.org/v1\n"), bombSize)
		}), "bomb.md", "larger than the vault's limit"},
	}
}

// damaged returns a vault holding keep.md, to which c's entry was then added
// with git by hand, reopened; and the memory path of the entry.
//
// The vault is plain: the entries are put by hand at plain names, which a
// sealed vault refuses first as names that do not open (damagedSealed).
func damaged(t *testing.T, c damageCase) (*vault.Vault, string) {
	t.Helper()
	return damagedIn(t, c, vaulttest.NewPlainAt)
}

// damagedSealed is damaged on a sealed vault.
func damagedSealed(t *testing.T, c damageCase) (*vault.Vault, string) {
	t.Helper()
	return damagedIn(t, c, vaulttest.NewSealedAt)
}

func damagedIn(t *testing.T, c damageCase, newAt func(testing.TB, string) (*vault.Vault, vault.Options)) (*vault.Vault, string) {
	t.Helper()
	dir := t.TempDir()
	v, opts := newAt(t, dir)
	write(t, v, "/memories/keep.md", "kept\n")
	v.Close()
	git := filepath.Join(dir, "vault.git")
	h := gittest.Damage(t, git)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	p, e := c.entry(h)
	head := h.Head()
	h.Push(h.Commit(h.Set(head+"^{tree}", p, e), "by hand\n", head))
	v, err := vault.Open(ctx, git, opts)
	if err != nil {
		t.Fatalf("Open of the damaged vault: %v", err)
	}
	t.Cleanup(func() { v.Close() })
	return v, "/" + p
}

// TestReadsNeverTrustTheTree holds: in a vault changed by hand, one
// bad entry fails alone, with its own reason and never the identity's; the
// listing holds the rest, with their sizes; no read inflates the bomb.
func TestReadsNeverTrustTheTree(t *testing.T) {
	for _, c := range damageCases() {
		t.Run(c.name, func(t *testing.T) {
			v, p := damaged(t, c)
			s, err := v.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dir := "/memories"
			es, err := s.List(ctx, dir)
			if err != nil {
				t.Fatalf("List(%s) = %v, want the listing with the bad entry marked", dir, err)
			}
			var bad *vault.Entry
			for i, e := range es {
				switch {
				case e.Name == "keep.md":
					if e.Err != nil || e.Size != 5 {
						t.Errorf("keep.md in the listing = %+v, want size 5 and no error", e)
					}
				case e.Err != nil:
					bad = &es[i]
				case c.name == "dir is a blob" && e.Name == "d":
					// A listing reads no subtree: the entry is a
					// directory until it is read.
					es[i].Err = vault.ErrBadEntry
					bad = &es[i]
					if _, err := s.List(ctx, "/memories/d"); err != nil {
						es[i].Err = err
					}
				}
			}
			if bad == nil {
				t.Fatalf("List(%s) = %+v: no entry marked bad", dir, es)
			}
			checkBad(t, "the listing's entry", bad.Err, c.reason)
			if c.listed != "" && bad.Name != c.listed {
				t.Errorf("bad entry named %q, want %q", bad.Name, c.listed)
			}
			if got, err := read(t, v, "/memories/keep.md"); err != nil || got != "kept\n" {
				t.Errorf("keep.md = %q, %v", got, err)
			}
			if c.listed == "" {
				return // no memory path names it
			}
			_, err = s.ReadFile(ctx, p)
			if c.name == "dir is a blob" {
				_, err = s.List(ctx, p)
			}
			checkBad(t, "reading "+p, err, c.reason)
		})
	}
}

func checkBad(t *testing.T, what string, err error, reason string) {
	t.Helper()
	if !errors.Is(err, vault.ErrBadEntry) {
		t.Errorf("%s: error %v, want ErrBadEntry", what, err)
		return
	}
	if errors.Is(err, vault.ErrDecrypt) || errors.Is(err, vault.ErrNoIdentity) || strings.Contains(err.Error(), "identity") {
		t.Errorf("%s: error %q blames the identity", what, err)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("%s: error %q, want the reason %q", what, err, reason)
	}
}

// TestMemoriesNotADirectory: a memories/ that is a blob fails the listing of
// the root with its reason, not the identity's.
func TestMemoriesNotADirectory(t *testing.T) {
	v, _ := damaged(t, damageCase{entry: func(h *gittest.Hostile) (string, gittest.TreeEntry) {
		return "memories", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte("age-encryption.org/v1\n"))}
	}})
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.List(ctx, "/memories")
	checkBad(t, "List(/memories)", err, "not a directory")
}
