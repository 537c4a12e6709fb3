package vault_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// A rename is one R entry whatever the order of its paths: a target that sorts
// before the source once showed as a whole-file addition, then the rename.
func TestShowPairsRenamesInAnyOrder(t *testing.T) {
	cases := []struct {
		name, from, to string
		files          []string // under from, "" for from itself
		want           []string // "old -> new"
	}{
		{"later", "/memories/m.md", "/memories/zz/m2.md", []string{""},
			[]string{"/memories/m.md -> /memories/zz/m2.md"}},
		{"earlier", "/memories/m.md", "/memories/aa/m2.md", []string{""},
			[]string{"/memories/m.md -> /memories/aa/m2.md"}},
		{"directory earlier", "/memories/m", "/memories/a", []string{"/x.md", "/y/z.md"},
			[]string{"/memories/m/x.md -> /memories/a/x.md", "/memories/m/y/z.md -> /memories/a/y/z.md"}},
		{"directory later", "/memories/m", "/memories/zz", []string{"/x.md", "/y/z.md"},
			[]string{"/memories/m/x.md -> /memories/zz/x.md", "/memories/m/y/z.md -> /memories/zz/y/z.md"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := vaulttest.New(t)
			put(t, v, "/memories/keep.md", "k\n")
			for _, f := range tc.files {
				put(t, v, tc.from+f, "body of "+f+"\n")
			}
			before := mustLog(t, v)[0].Commit
			r := mv(t, v, tc.from, tc.to)
			ch, err := v.Show(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			check := func(call string, fcs []vault.FileChange) {
				t.Helper()
				var got []string
				for _, fc := range fcs {
					if fc.Status != vault.Renamed || fc.Diff != "" {
						got = append(got, fmt.Sprintf("%s %s %s diff %q", fc.Status, fc.Path, fc.NewPath, fc.Diff))
						continue
					}
					got = append(got, fc.Path+" -> "+fc.NewPath)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("%s = %q, want %q", call, got, tc.want)
				}
			}
			check("Show(rename)", ch.Files)
			fcs, err := v.Diff(ctx, before, r, "")
			if err != nil {
				t.Fatal(err)
			}
			check("Diff(before, rename)", fcs)
		})
	}
}
