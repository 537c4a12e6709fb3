package exchange_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestSyncSealedMerge: two clones of a sealed vault diverge, and the merge
// works on stored names and opens what needs plaintext: an edit both sides
// made to one line conflicts and is named by its memory path; an edit follows
// a file whose folder the other side moved (every stored name below it
// changed); a file and a directory made at one name keep both, the file moved
// aside under a name sealed anew. The merge commit is sealed, and the log
// opens it; the remote holds none of the names or words.
func TestSyncSealedMerge(t *testing.T) {
	url := fileRemote(t)
	a, b := pairIn(t, url, newClock(time.Second), true)
	write(t, a, "/memories/clients/acme/notes.md", "one\ntwo\nthree\n")
	write(t, a, "/memories/shared.md", "line\n")
	mustSync(t, a)
	mustSync(t, b)

	write(t, a, "/memories/shared.md", "line from a\n")
	rename(t, a, "/memories/clients", "/memories/customers")
	write(t, a, "/memories/spot", "a's file\n")

	write(t, b, "/memories/shared.md", "line from b\n")
	write(t, b, "/memories/clients/acme/notes.md", "one\ntwo from b\nthree\n")
	write(t, b, "/memories/spot/inner.md", "b's folder\n")

	mustSync(t, a)
	res := mustSync(t, b)
	if res.Action != "merge" {
		t.Fatalf("Sync = %+v, want a merge", res)
	}
	if got, want := strings.Join(res.Conflicts, " "), "/memories/shared.md /memories/spot.conflict-theirs"; got != want {
		t.Errorf("Conflicts = %q, want %q (memory paths, opened)", got, want)
	}
	mustSync(t, a)
	for _, v := range []*vault.Vault{a, b} {
		for p, want := range map[string]string{
			"/memories/customers/acme/notes.md": "one\ntwo from b\nthree\n",
			"/memories/spot.conflict-theirs":    "a's file\n",
			"/memories/spot/inner.md":           "b's folder\n",
		} {
			if got, err := read(t, v, p); err != nil || got != want {
				t.Errorf("read %s = %q, %v; want %q", p, got, err, want)
			}
		}
		if got, _ := read(t, v, "/memories/shared.md"); !strings.Contains(got, "<<<<<<< ours") || !strings.Contains(got, "line from a") {
			t.Errorf("shared.md = %q, want both lines between markers", got)
		}
		if _, err := read(t, v, "/memories/clients/acme/notes.md"); err == nil {
			t.Errorf("the moved file is still at its old path")
		}
	}
	recs := vaulttest.Log(t, b, vault.LogOptions{Limit: 1})
	if r := recs[0]; r.Command != "merge" || !strings.HasPrefix(r.Subject, "merge origin/main") || len(r.Conflicts) != 2 {
		t.Errorf("the merge's record = %+v, want it opened, naming 2 conflicts", r)
	}
	for _, needle := range []string{"shared", "spot", "conflict", "customers", "Memory-", "merge origin"} {
		if found := vaulttest.FindInObjects(t, strings.TrimPrefix(url, "file://"), []byte(needle)); len(found) > 0 {
			t.Errorf("the remote holds %q in %v", needle, found)
		}
	}
}
