package vault_test

import (
	"regexp"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestGrepPastABadEntry: one entry put into the tree by hand with git (a
// damaged age file; in a sealed vault also a name stored in the clear, which
// does not open under the vault's key) once failed the whole search, so
// nothing that reads was searched. Grep searches the rest and names each bad
// entry, with its reason.
func TestGrepPastABadEntry(t *testing.T) {
	for _, c := range []struct {
		format string
		sealed bool
		reason string
	}{
		{"sealed", true, "a name not sealed under this vault's key"},
		{"plain", false, "a damaged age file (no complete header)"},
	} {
		t.Run(c.format, func(t *testing.T) {
			v := vaulttest.NewFormat(t, c.sealed)
			write(t, v, "/memories/a.md", "needle a\n")
			write(t, v, "/memories/z/z.md", "needle z\n")
			if err := v.Close(); err != nil { // what it wrote reaches git's refs
				t.Fatal(err)
			}
			h := gittest.Damage(t, v.Dir())
			blob := h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))
			h.Change("memories/m-bad.md", gittest.TreeEntry{Mode: "100644", Hash: blob}, "by hand\n")
			v2, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
			if err != nil {
				t.Fatal(err)
			}
			defer v2.Close()
			// In a sealed vault the bad entry is no memory path, so it is
			// met in a folder's listing only.
			for _, paths := range [][]string{nil, {"/memories/m-bad.md", "/memories/z"}, {"/memories", "/memories/z"}} {
				if c.sealed && len(paths) > 0 && paths[0] == "/memories/m-bad.md" {
					continue
				}
				res, err := v2.Grep(ctx, regexp.MustCompile("needle|body"), vault.GrepOptions{Paths: paths})
				if err != nil {
					t.Fatalf("Grep(%q) = %v, want the files that read searched", paths, err)
				}
				var got []string
				for _, f := range res.Files {
					got = append(got, f.Path)
				}
				want := []string{"/memories/a.md", "/memories/z/z.md"}
				if len(paths) > 0 && paths[0] == "/memories/m-bad.md" {
					want = want[1:]
				}
				if len(got) != len(want) || got[0] != want[0] {
					t.Errorf("Grep(%q).Files = %q, want %q", paths, got, want)
				}
				if len(res.BadEntries) != 1 || res.BadEntries[0].Path != "/memories/m-bad.md" || res.BadEntries[0].Reason != c.reason {
					t.Errorf("Grep(%q).BadEntries = %+v, want /memories/m-bad.md: %s", paths, res.BadEntries, c.reason)
				}
			}
		})
	}
}
