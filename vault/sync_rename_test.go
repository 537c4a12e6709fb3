package vault_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// TestSyncRenameCases: rename against modify where following the
// rename must not cost another file. Each runs in both orders of syncing, with
// every commit in the same second.
func TestSyncRenameCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		base map[string]string
		a, b func(t *testing.T, v *vault.Vault)
		want map[string]string
		// When want is nil: the paths there must be, and lines each must hold.
		lines map[string][]string
	}{{
		// Found by TestSyncRandom: the merge put the modified f.md at s0 and
		// dropped b's own s0.
		name: "renamed onto a file the other side made",
		base: map[string]string{"/memories/f.md": "f1\nf2\n"},
		a:    func(t *testing.T, v *vault.Vault) { rename(t, v, "/memories/f.md", "/memories/s0") },
		b: func(t *testing.T, v *vault.Vault) {
			write(t, v, "/memories/f.md", "f1\nf2 from b\n")
			write(t, v, "/memories/s0", "s0 from b\n")
		},
		// The rename is not followed: delete vs modify keeps f.md, and both
		// made s0, merged with an empty base.
		want: map[string]string{"/memories/f.md": "f1\nf2 from b\n", "/memories/s0": "CONFLICT f1\nf2\n|s0 from b\n"},
	}, {
		// Commits were ordered by time, and those of one second newest first,
		// so the chain was followed backwards, to x, g's old content.
		name: "a chain of renames in one second",
		base: map[string]string{"/memories/f.md": "f1\nf2\n", "/memories/g.md": "g1\n"},
		a: func(t *testing.T, v *vault.Vault) {
			rename(t, v, "/memories/g.md", "/memories/x.md")
			rename(t, v, "/memories/f.md", "/memories/g.md")
		},
		b:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/f.md", "f1\nf2 from b\n") },
		want: map[string]string{"/memories/g.md": "f1\nf2 from b\n", "/memories/x.md": "g1\n"},
	}, {
		name: "two files renamed in turn onto one name",
		base: map[string]string{"/memories/f.md": "f1\nf2\n", "/memories/g.md": "g1\ng2\n"},
		a: func(t *testing.T, v *vault.Vault) {
			rename(t, v, "/memories/f.md", "/memories/n.md")
			remove(t, v, "/memories/n.md")
			rename(t, v, "/memories/g.md", "/memories/n.md")
		},
		b: func(t *testing.T, v *vault.Vault) {
			write(t, v, "/memories/f.md", "f1\nf2 from b\n")
			write(t, v, "/memories/g.md", "g1\ng2 from b\n")
		},
		// f.md was renamed and deleted: delete vs modify keeps it; g.md follows.
		want: map[string]string{"/memories/f.md": "f1\nf2 from b\n", "/memories/n.md": "g1\ng2 from b\n"},
	}, {
		// Found by TestSyncRandom: a's f.md is another file than the base's,
		// so b's rename is not a move of it; before, g's content went to h.md
		// and f's was dropped.
		name: "renamed on one side, replaced on the other",
		base: map[string]string{"/memories/f.md": "f1\n", "/memories/g.md": "g1\n"},
		a: func(t *testing.T, v *vault.Vault) {
			remove(t, v, "/memories/f.md")
			rename(t, v, "/memories/g.md", "/memories/f.md")
		},
		b:    func(t *testing.T, v *vault.Vault) { rename(t, v, "/memories/f.md", "/memories/h.md") },
		want: map[string]string{"/memories/f.md": "g1\n", "/memories/h.md": "f1\n"},
	}, {
		// Found by TestSyncRandom: b's s1 is another file than the base's, so
		// a's edit of s1 is not merged with it as with an edit: before, the
		// line d, which b's file lacks and a did not touch, was dropped.
		name: "modified on one side, replaced on the other",
		base: map[string]string{"/memories/s1": "a\nb\nc\nd\ne\n", "/memories/s0": "a\nb\nc\ne\n"},
		a:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/s1", "a from a\nb\nc\nd\ne\n") },
		b: func(t *testing.T, v *vault.Vault) {
			remove(t, v, "/memories/s1")
			rename(t, v, "/memories/s0", "/memories/s1")
		},
		lines: map[string][]string{"/memories/s1": {"a from a", "a", "b", "c", "d", "e"}},
	}} {
		for _, aFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/a first %v", tc.name, aFirst), func(t *testing.T) {
				a, b := pairAt(t, fileRemote(t), newClock(0))
				for _, p := range sortedPaths(tc.base) {
					write(t, a, p, tc.base[p])
				}
				mustSync(t, a)
				mustSync(t, b)
				tc.a(t, a)
				tc.b(t, b)
				first, second := a, b
				if !aFirst {
					first, second = b, a
				}
				mustSync(t, first)
				mustSync(t, second)
				mustSync(t, first)
				if head(t, a) != head(t, b) {
					t.Fatalf("heads differ after syncing both ways")
				}
				got := files(t, a)
				if tc.want == nil {
					if len(got) != len(tc.lines) {
						t.Errorf("files = %q, want %d", got, len(tc.lines))
					}
					for p, ls := range tc.lines {
						have := lines(map[string]string{p: got[p]})
						for _, l := range ls {
							if !have[l] {
								t.Errorf("%s = %q, want a line %q in it", p, got[p], l)
							}
						}
					}
					return
				}
				for p, c := range got {
					got[p] = conflictSides(c)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("files = %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// conflictSides rewrites a file that is one conflict block as "CONFLICT x|y",
// its two sides in byte order, so that the result does not depend on which
// side merged; any other file comes back as it is.
func conflictSides(c string) string {
	if !strings.HasPrefix(c, "<<<<<<< ours") {
		return c
	}
	ours, rest, ok := strings.Cut(c[strings.IndexByte(c, '\n')+1:], "=======\n")
	if !ok {
		return c
	}
	theirs, end, ok := strings.Cut(rest, ">>>>>>> theirs")
	if !ok || strings.Count(end, "\n") != 1 || !strings.HasSuffix(end, "\n") {
		return c
	}
	if ours > theirs {
		ours, theirs = theirs, ours
	}
	return "CONFLICT " + ours + "|" + theirs
}

// TestSyncRenameThroughMerge: the renames on a side whose history since the
// merge base holds a merge (here, of a third vault's work) are followed too,
// in the order made.
func TestSyncRenameThroughMerge(t *testing.T) {
	url := fileRemote(t)
	a, b := pairAt(t, url, newClock(0))
	write(t, a, "/memories/f.md", "f1\nf2\n")
	write(t, a, "/memories/g.md", "g1\ng2\n")
	mustSync(t, a)
	mustSync(t, b)
	c, _, err := vault.Clone(ctx, url, filepath.Join(t.TempDir(), "c.git"), vault.Options{IdentityFile: a.IdentityFile()}, vault.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rename(t, c, "/memories/g.md", "/memories/h.md")
	mustSync(t, c)
	rename(t, a, "/memories/f.md", "/memories/n.md")
	if res := mustSync(t, a); res.Action != "merge" {
		t.Fatalf("a's sync = %+v, want a merge with c's rename", res)
	}
	rename(t, a, "/memories/n.md", "/memories/x.md")
	mustSync(t, a)
	write(t, b, "/memories/f.md", "f1\nf2 from b\n")
	write(t, b, "/memories/g.md", "g1\ng2 from b\n")
	mustSync(t, b)
	want := map[string]string{"/memories/x.md": "f1\nf2 from b\n", "/memories/h.md": "g1\ng2 from b\n"}
	if got := files(t, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}
