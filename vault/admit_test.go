package vault_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// hostileCase is one thing an attacker pushes: a change to the tree, and a
// phrase the refusal must hold.
type hostileCase struct {
	name   string
	change func(h *gittest.Hostile) string // returns the new root tree
	reason string
}

// sealedReasons are the phrases of the refusals a sealed vault gives in other
// words, by case name: its blobs start with a size header.
var sealedReasons = map[string]string{
	"plaintext":                "no sealed size header",
	"age magic over plaintext": "no sealed size header",
}

func hostileCases() []hostileCase { return hostileCasesIn(hostileNames{}) }

// hostileCasesIn is hostileCases with memory paths stored as n stores them:
// in a sealed vault, sealed with its key, as a writer gone bad would.
func hostileCasesIn(n hostileNames) []hostileCase {
	age := func(h *gittest.Hostile) string {
		return h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))
	}
	set := func(p, mode string, blob func(h *gittest.Hostile) string) func(h *gittest.Hostile) string {
		return func(h *gittest.Hostile) string {
			return h.Set(h.Head()+"^{tree}", n.path(p), gittest.TreeEntry{Mode: mode, Hash: blob(h)})
		}
	}
	named := func(name string) func(h *gittest.Hostile) string {
		return func(h *gittest.Hostile) string {
			return h.Set(h.Head()+"^{tree}", n.path("memories/x"), gittest.TreeEntry{Mode: "100644", Name: n.name(vault.Root, name), Hash: age(h)})
		}
	}
	plain := func(h *gittest.Hostile) string { return h.Blob([]byte("plaintext\n")) }
	return []hostileCase{
		{"plaintext", set("memories/evil.md", "100644", plain), "not an age file"},
		{"symlink", set("memories/link", "120000", func(h *gittest.Hostile) string { return h.Blob([]byte("/etc/passwd")) }), "symbolic link"},
		{"gitlink", set("memories/sub", "160000", func(h *gittest.Hostile) string { return h.Head() }), "gitlink"},
		{"executable", set("memories/run", "100755", age), "executable"},
		{"memories blob", set("memories", "100644", age), "not a directory"},
		{"top-level script", set("run.sh", "100644", plain), "outside the vault's layout"},
		{"dot git", named(".git"), "reserved name"},
		{"dot git case", named(".GiT"), "reserved name"},
		{"dot git hfs", named(".g\u200cit"), "reserved name"},
		{"dot git hfs leading", named("\u200c.git"), "reserved name"},
		{"dot git ntfs", named("git~1"), "reserved name"},
		{"dot git ntfs stream", named(".git::$INDEX_ALLOCATION"), "reserved name"},
		{"dotdot", named(".."), `".." name`},
		{"dot", named("."), `"." name`},
		{"slash", named("a/b"), "slash"},
		{"newline", named("a\nb"), "control character"},
		{"backslash", named(`a\b`), "backslash"},
		{"long", named(strings.Repeat("n", 5000)), "over 255 bytes"},
		{"format", set(".memvault/format", "100644", func(h *gittest.Hostile) string { return h.Blob([]byte("999\n")) }), "format"},
		// age's magic line over plaintext: only the first line was checked.
		{"age magic over plaintext", set("memories/evil.md", "100644", func(h *gittest.Hostile) string {
			return h.Blob([]byte("age-encryption.org/v1\nmeet at dawn, password hunter2\n"))
		}), "a damaged age file"},
		// Two entries of one name: a listing showed both, a read found one.
		{"duplicate entries", func(h *gittest.Hostile) string {
			a, b := h.Blob([]byte("one")), h.Blob([]byte("two"))
			sub := h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "secret.md", Hash: a}, {Mode: "100644", Name: "secret.md", Hash: b}})
			return h.Set(h.Head()+"^{tree}", n.path("memories/x"), gittest.TreeEntry{Mode: "40000", Hash: sub})
		}, "duplicateEntries"},
		{"unsorted entries", func(h *gittest.Hostile) string {
			a := h.Blob([]byte("one"))
			sub := h.Loose("tree", rawTree(gittest.TreeEntry{Mode: "100644", Name: "b.md", Hash: a}, gittest.TreeEntry{Mode: "100644", Name: "a.md", Hash: a}))
			return h.Set(h.Head()+"^{tree}", n.path("memories/x"), gittest.TreeEntry{Mode: "40000", Hash: sub})
		}, "treeNotSorted"},
		{"too big", set("memories/big.md", "100644", func(h *gittest.Hostile) string {
			return h.Blob(append([]byte("age-encryption.org/v1\n"), make([]byte, 2<<20)...))
		}), "over the limit"},
	}
}

// rawTree is the body of a tree object holding es in the order given.
func rawTree(es ...gittest.TreeEntry) []byte {
	var b []byte
	for _, e := range es {
		raw, err := hex.DecodeString(e.Hash)
		if err != nil {
			panic(err)
		}
		b = append(fmt.Appendf(b, "%s %s\x00", e.Mode, e.Name), raw...)
	}
	return b
}

// TestSyncRefusesHostile pushes each hostile change with git plumbing to a real
// remote and checks that the victim's sync refuses it, names the commit and the
// reason, moves nothing, and syncs again once the remote's branch is back at
// the last good commit.
func TestSyncRefusesHostile(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(formatName(sealed), func(t *testing.T) { syncRefusesHostile(t, sealed) })
	}
}

func syncRefusesHostile(t *testing.T, sealed bool) {
	// The cases are made per vault; their names and number are the same.
	for i := range hostileCasesIn(hostileNames{}) {
		t.Run(hostileCases()[i].name, func(t *testing.T) {
			url := gittest.Bare(t, t.TempDir(), "remote")
			a, b, opts := hostilePairIn(t, url, sealed)
			write(t, a, "/memories/x/keep.md", "kept\n")
			mustSync(t, a)
			h := gittest.NewHostile(t, url)
			h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
			tc := hostileCasesIn(namesOf(t, h, opts, sealed))[i]
			reason := tc.reason
			if r, ok := sealedReasons[tc.name]; ok && sealed {
				reason = r
			}
			good := h.Head()
			bad := h.Commit(tc.change(h), "hostile\n", good)
			h.Push(bad)
			before := head(t, b)
			_, err := b.Sync(ctx, vault.SyncOptions{Host: "test"})
			if !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("Sync = %v, want ErrRefused", err)
			}
			if !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), reason) {
				t.Errorf("Sync error %q does not name commit %s and %q", err, bad, reason)
			}
			if got := head(t, b); got != before {
				t.Errorf("head moved from %s to %s", before, got)
			}
			// The clone is refused the same way.
			if _, _, err := vault.Clone(ctx, url, filepath.Join(t.TempDir(), "c.git"), opts, vault.CloneOptions{}); !errors.Is(err, vault.ErrRefused) {
				t.Errorf("Clone = %v, want ErrRefused", err)
			}
			// The way forward the message gives: the remote's branch goes back
			// to the last good commit, and sync works again.
			h.Git("update-ref", "refs/heads/main", good)
			h.Git("push", "-q", "--force", url, "refs/heads/main:refs/heads/main")
			mustSync(t, a)
			mustSync(t, b)
			if got, err := read(t, b, "/memories/x/keep.md"); err != nil || got != "kept\n" {
				t.Errorf("after the revert, keep.md = %q, %v", got, err)
			}
		})
	}
}

// TestMergeRefusesHostile is the diverged case: the victim has its own commit,
// so sync would merge; nothing moves.
func TestMergeRefusesHostile(t *testing.T) {
	url := gittest.Daemon(t)
	a, b, opts := hostilePair(t, url)
	write(t, a, "/memories/a.md", "a\n")
	mustSync(t, a)
	write(t, b, "/memories/b.md", "b\n")
	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	bad := h.Commit(h.Set(h.Head()+"^{tree}", "memories/evil.md", gittest.TreeEntry{Mode: "120000", Hash: h.Blob([]byte("x"))}), "hostile\n", h.Head())
	h.Push(bad)
	before := head(t, b)
	if _, err := b.Sync(ctx, vault.SyncOptions{Host: "test"}); !errors.Is(err, vault.ErrRefused) {
		t.Fatalf("Sync = %v, want ErrRefused", err)
	}
	if got := head(t, b); got != before {
		t.Errorf("head moved from %s to %s", before, got)
	}
}

// hostilePair is pair that also returns the options (the identity) of both.
// Its vaults are plain: the hostile entries are written at plain names, which
// a sealed vault would refuse for not opening before the check under test
// (hostilePairIn runs a case on both formats).
func hostilePair(t *testing.T, url string) (a, b *vault.Vault, opts vault.Options) {
	t.Helper()
	return vaulttest.PairPlain(t, url)
}

// hostilePairIn is hostilePair, in the sealed format when sealed.
func hostilePairIn(t *testing.T, url string, sealed bool) (a, b *vault.Vault, opts vault.Options) {
	t.Helper()
	if sealed {
		return vaulttest.PairSealed(t, url)
	}
	return vaulttest.PairPlain(t, url)
}
