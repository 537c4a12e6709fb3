package vault_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memvault/memvault/vault/vaulttest"
)

// LogOldest is the end of Log: the same records, in the same order, and the
// length of the whole history, on a history whose oldest commits lie below
// merges (where Log orders the sides by date) as on a straight one.
func TestLogOldestIsLogsEnd(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	check := func(stage string) {
		t.Helper()
		all := mustLog(t, a)
		for _, n := range []int{1, 2, 3, 5, len(all) - 1, len(all), len(all) + 4} {
			if n < 1 {
				continue
			}
			recs, total, err := a.LogOldest(ctx, n)
			if err != nil {
				t.Fatalf("%s: LogOldest(%d): %v", stage, n, err)
			}
			want := all[max(len(all)-n, 0):]
			if total != len(all) || !slices.Equal(commits(recs), commits(want)) {
				t.Errorf("%s: LogOldest(%d) = %v, %d in all; want %v, %d", stage, n, commits(recs), total, commits(want), len(all))
			}
			for i := range recs {
				if fmt.Sprint(recs[i]) != fmt.Sprint(want[i]) {
					t.Errorf("%s: LogOldest(%d)[%d] = %+v, want Log's %+v", stage, n, i, recs[i], want[i])
				}
			}
		}
	}
	for i := range 4 {
		write(t, a, fmt.Sprintf("/memories/s%d.md", i), "straight\n")
	}
	mustSync(t, a)
	mustSync(t, b)
	check("straight")
	for i := range 3 {
		write(t, a, fmt.Sprintf("/memories/a%d.md", i), "from a\n")
		write(t, b, fmt.Sprintf("/memories/b%d.md", i), "from b\n")
	}
	mustSync(t, a)
	mustSync(t, b)
	mustSync(t, a)
	check("one merge")
	write(t, a, "/memories/a.md", "again\n")
	write(t, b, "/memories/b.md", "again\n")
	mustSync(t, a)
	mustSync(t, b)
	mustSync(t, a)
	write(t, a, "/memories/c.md", "on top\n")
	check("two merges")
}

// LogOldest of an empty history is nothing.
func TestLogOldestEmpty(t *testing.T) {
	v := vaulttest.New(t)
	recs, total, err := v.LogOldest(ctx, 10)
	all := mustLog(t, v)
	if err != nil || total != len(all) || len(recs) != len(all) {
		t.Errorf("LogOldest(10) on a new vault = %d records, %d in all, %v; want Log's %d", len(recs), total, err, len(all))
	}
}
