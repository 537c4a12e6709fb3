package vault_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestSyncFileAndDirectory: when one side makes /memories/x a file and
// the other makes it a directory, the merge keeps both, in either order of
// syncing: the directory stays and the file moves aside to x.conflict-<side>,
// named as a conflict. Before, the merge failed in one order (the vaults could
// never sync again) and dropped the directory's files in the other.
func TestSyncFileAndDirectory(t *testing.T) {
	long := strings.Repeat("n", 250) // a name with no room left for the suffix
	longSealed := strings.Repeat("s", 140)
	for _, tc := range []struct {
		name  string
		plain bool              // a plain vault, for names a sealed one cannot hold
		base  map[string]string // written and synced before the sides diverge
		a, b  func(t *testing.T, v *vault.Vault)
		// want is the files after the merge. ta and tb stand for the side
		// a's and b's changes are on in the vault that merges: "ours" or "theirs".
		want func(ta, tb string) map[string]string
	}{{
		name: "file vs new directory",
		a:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/x", "file x\n") },
		b:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/x/y.md", "y\n") },
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/x.conflict-" + ta: "file x\n", "/memories/x/y.md": "y\n"}
		},
	}, {
		name: "rename to a file vs new directory",
		base: map[string]string{"/memories/r.md": "r\n"},
		a:    func(t *testing.T, v *vault.Vault) { rename(t, v, "/memories/r.md", "/memories/x") },
		b:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/x/y.md", "y\n") },
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/x.conflict-" + ta: "r\n", "/memories/x/y.md": "y\n"}
		},
	}, {
		name: "rename to a file vs modify and new directory",
		base: map[string]string{"/memories/r.md": "r1\nr2\nr3\n"},
		a:    func(t *testing.T, v *vault.Vault) { rename(t, v, "/memories/r.md", "/memories/x") },
		b: func(t *testing.T, v *vault.Vault) {
			write(t, v, "/memories/r.md", "r1\nr2 from b\nr3\n")
			write(t, v, "/memories/x/y.md", "y\n")
		},
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/x.conflict-" + ta: "r1\nr2 from b\nr3\n", "/memories/x/y.md": "y\n"}
		},
	}, {
		name: "directory replaced by a file vs added to",
		base: map[string]string{"/memories/d/1.md": "1\n", "/memories/d/2.md": "2\n"},
		a: func(t *testing.T, v *vault.Vault) {
			remove(t, v, "/memories/d")
			write(t, v, "/memories/d", "d file\n")
		},
		b: func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/d/3.md", "3\n") },
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/d.conflict-" + ta: "d file\n", "/memories/d/3.md": "3\n"}
		},
	}, {
		name: "file modified vs replaced by a directory",
		base: map[string]string{"/memories/x": "x1\n"},
		a:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/x", "x1\nx2\n") },
		b: func(t *testing.T, v *vault.Vault) {
			remove(t, v, "/memories/x")
			write(t, v, "/memories/x/y.md", "y\n")
		},
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/x.conflict-" + ta: "x1\nx2\n", "/memories/x/y.md": "y\n"}
		},
	}, {
		name: "directory deleted vs added to",
		base: map[string]string{"/memories/d/1.md": "1\n", "/memories/d/2.md": "2\n"},
		a:    func(t *testing.T, v *vault.Vault) { remove(t, v, "/memories/d") },
		b:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/d/3.md", "3\n") },
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/d/3.md": "3\n"}
		},
	}, {
		// Found by TestSyncRandom: the merged file could not be put over the
		// directory whose files all went ("put memories/d: not a directory").
		name: "directory emptied and a modified file renamed to its name",
		base: map[string]string{"/memories/d/1.md": "1\n", "/memories/f.md": "f1\nf2\n"},
		a: func(t *testing.T, v *vault.Vault) {
			remove(t, v, "/memories/d")
			rename(t, v, "/memories/f.md", "/memories/d")
		},
		b: func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/f.md", "f1\nf2 from b\n") },
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/d": "f1\nf2 from b\n"}
		},
	}, {
		name: "aside names taken",
		base: map[string]string{"/memories/x.conflict-ours": "o\n", "/memories/x.conflict-theirs": "t\n"},
		a:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/x", "file x\n") },
		b:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/x/y.md", "y\n") },
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/x.conflict-ours": "o\n", "/memories/x.conflict-theirs": "t\n",
				"/memories/x.conflict-" + ta + "-2": "file x\n", "/memories/x/y.md": "y\n"}
		},
	}, {
		name:  "long name",
		plain: true, // 250 bytes: plain only
		a:     func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/"+long, "file\n") },
		b:     func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/"+long+"/y.md", "y\n") },
		want: func(ta, tb string) map[string]string {
			suffix := ".conflict-" + ta
			return map[string]string{"/memories/" + long[:255-len(suffix)] + suffix: "file\n", "/memories/" + long + "/y.md": "y\n"}
		},
	}, {
		// A sealed name holds 143 bytes: the name moved aside is cut to
		// that, where the merge once found no free name and failed.
		name: "long name, sealed",
		a:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/"+longSealed, "file\n") },
		b:    func(t *testing.T, v *vault.Vault) { write(t, v, "/memories/"+longSealed+"/y.md", "y\n") },
		want: func(ta, tb string) map[string]string {
			suffix := ".conflict-" + ta
			return map[string]string{"/memories/" + longSealed[:143-len(suffix)] + suffix: "file\n", "/memories/" + longSealed + "/y.md": "y\n"}
		},
	}, {
		name: "a file on each side of a directory's two levels",
		base: map[string]string{"/memories/keep.md": "k\n"},
		a: func(t *testing.T, v *vault.Vault) {
			write(t, v, "/memories/p", "p file\n")
			write(t, v, "/memories/q/r", "r file\n")
		},
		b: func(t *testing.T, v *vault.Vault) {
			write(t, v, "/memories/p/q.md", "pq\n")
			write(t, v, "/memories/q", "q file\n")
		},
		want: func(ta, tb string) map[string]string {
			return map[string]string{"/memories/keep.md": "k\n", "/memories/p.conflict-" + ta: "p file\n",
				"/memories/p/q.md": "pq\n", "/memories/q.conflict-" + tb: "q file\n", "/memories/q/r": "r file\n"}
		},
	}} {
		for _, aFirst := range []bool{true, false} {
			order := "a pushes first"
			if !aFirst {
				order = "b pushes first"
			}
			t.Run(tc.name+"/"+order, func(t *testing.T) {
				a, b := pair(t, fileRemote(t))
				if tc.plain {
					a, b, _ = vaulttest.PairPlain(t, fileRemote(t))
				}
				if len(tc.base) > 0 {
					for _, p := range sortedPaths(tc.base) {
						write(t, a, p, tc.base[p])
					}
					mustSync(t, a)
					mustSync(t, b)
				}
				tc.a(t, a)
				tc.b(t, b)
				first, merger := a, b
				ta, tb := "theirs", "ours"
				if !aFirst {
					first, merger = b, a
					ta, tb = tb, ta
				}
				mustSync(t, first)
				res := mustSync(t, merger)
				if res.Action != "merge" || !res.Pushed {
					t.Fatalf("Sync of the second vault = %+v, want a pushed merge", res)
				}
				mustSync(t, first)
				if head(t, a) != head(t, b) {
					t.Fatalf("heads differ after syncing both ways")
				}
				want := tc.want(ta, tb)
				for name, v := range map[string]*vault.Vault{"a": a, "b": b} {
					if got := files(t, v); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s's files = %q, want %q", name, got, want)
					}
				}
				var aside []string
				for p := range want {
					if strings.Contains(p, ".conflict-") && tc.base[p] == "" {
						aside = append(aside, p)
					}
				}
				sort.Strings(aside)
				if fmt.Sprint(res.Conflicts) != fmt.Sprint(aside) {
					t.Errorf("Conflicts = %q, want the files moved aside %q", res.Conflicts, aside)
				}
				if fmt.Sprint(res.MovedAside) != fmt.Sprint(aside) {
					t.Errorf("MovedAside = %q, want %q", res.MovedAside, aside)
				}
				// The merge's Memory-Conflict trailers, opened (the vault is sealed).
				rec := vaulttest.Log(t, a, vault.LogOptions{Limit: 1})[0]
				if rec.Command != "merge" || fmt.Sprint(rec.Conflicts) != fmt.Sprint(aside) {
					t.Errorf("the merge commit %s names conflicts %q, want %q", rec.Command, rec.Conflicts, aside)
				}
			})
		}
	}
}

func sortedPaths(m map[string]string) []string {
	ps := make([]string, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
