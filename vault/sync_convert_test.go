package vault_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestSyncConversionFastForwards: one clone of a plain vault converts it to
// the sealed format; the other, with nothing of its own, takes the conversion
// as a fast-forward (admission checks its tree whole, as a rotation's), reads
// every file, and writes sealed from then on.
func TestSyncConversionFastForwards(t *testing.T) {
	url := fileRemote(t)
	a, b := pairIn(t, url, newClock(time.Second), false)
	write(t, a, "/memories/clients/acme/notes.md", "one\ntwo\n")
	rename(t, a, "/memories/clients/acme/notes.md", "/memories/clients/acme/n.md")
	write(t, a, "/memories/top.md", "top\n")
	mustSync(t, a)
	mustSync(t, b)

	if _, err := a.Seal(ctx, vault.Meta{}, vault.SealOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	if res := mustSync(t, b); res.Action != "fast-forward" {
		t.Fatalf("Sync after the conversion = %+v, want a fast-forward", res)
	}
	for p, want := range map[string]string{"/memories/clients/acme/n.md": "one\ntwo\n", "/memories/top.md": "top\n"} {
		if got, err := read(t, b, p); err != nil || got != want {
			t.Errorf("read %s on the other clone = %q, %v; want %q", p, got, err, want)
		}
	}
	var cmds []string
	for _, r := range vaulttest.Log(t, b, vault.LogOptions{Path: "/memories/clients/acme/n.md"}) {
		cmds = append(cmds, r.Command)
	}
	if got := strings.Join(cmds, " "); got != "seal rename create" {
		t.Errorf("Log(n.md) on the other clone = %s, want seal rename create", got)
	}
	write(t, b, "/memories/clients/fromb.md", "b\n")
	mustSync(t, b)
	mustSync(t, a)
	if got, err := read(t, a, "/memories/clients/fromb.md"); err != nil || got != "b\n" {
		t.Errorf("read fromb.md after the other clone's sealed write = %q, %v", got, err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	tree, err := exec.Command(gittest.Git(t), "--git-dir", strings.TrimPrefix(url, "file://"), "ls-tree", "-r", "--name-only", "main").Output()
	if err != nil || strings.Contains(string(tree), "clients") || strings.Contains(string(tree), ".md") {
		t.Errorf("the remote's tree after the conversion =\n%s%v\nwant no name in it", tree, err)
	}
}

// TestSyncConversionDiverged: one clone converts while the other, still plain,
// writes, renames and deletes. Whichever syncs second merges: the plain side's
// changes are sealed under the conversion's key and merged on plaintext; the
// result is sealed, holds both sides' work, and the other takes it as a
// fast-forward.
func TestSyncConversionDiverged(t *testing.T) {
	for _, converterMerges := range []bool{false, true} {
		t.Run(map[bool]string{false: "the plain side merges", true: "the converting side merges"}[converterMerges], func(t *testing.T) {
			url := fileRemote(t)
			a, b := pairIn(t, url, newClock(time.Second), false)
			write(t, a, "/memories/notes/one.md", "one\ntwo\nthree\n")
			created := vaulttest.Log(t, a, vault.LogOptions{Limit: 1})[0].Commit
			write(t, a, "/memories/notes/two.md", "two\n")
			write(t, a, "/memories/gone.md", "gone\n")
			mustSync(t, a)
			mustSync(t, b)

			if _, err := a.Seal(ctx, vault.Meta{}, vault.SealOptions{}); err != nil {
				t.Fatal(err)
			}
			write(t, a, "/memories/notes/one.md", "one from a\ntwo\nthree\n")
			write(t, b, "/memories/notes/one.md", "one\ntwo\nthree from b\n")
			write(t, b, "/memories/notes/b.md", "b's\n")
			rename(t, b, "/memories/notes/two.md", "/memories/notes/deux.md")
			if err := b.Update(ctx, vault.Meta{Command: "delete"}, func(tx *vault.Tx) error { return tx.Remove("/memories/gone.md") }); err != nil {
				t.Fatal(err)
			}
			first, second := a, b
			if converterMerges {
				first, second = b, a
			}
			mustSync(t, first)
			res, err := second.Sync(ctx, vault.SyncOptions{Host: "test"})
			if err != nil {
				t.Fatalf("Sync of the diverged clones: %v", err)
			}
			if res.Action != "merge" {
				t.Fatalf("Sync = %+v, want a merge", res)
			}
			if res := mustSync(t, first); res.Action != "fast-forward" {
				t.Fatalf("Sync after the merge = %+v, want a fast-forward", res)
			}
			for _, v := range []*vault.Vault{a, b} {
				wantMergedNotes(t, v)
				if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
					t.Errorf("Fsck = %v, %v", problems, err)
				}
				// The file's history goes back through the merge and the
				// conversion to its creation, and its blame too.
				var cmds []string
				found := map[string]bool{}
				for _, r := range vaulttest.Log(t, v, vault.LogOptions{Path: "/memories/notes/one.md"}) {
					cmds = append(cmds, r.Command)
					found[r.Command] = true
					found[r.Commit] = true
				}
				if !found["merge"] || !found["seal"] || !found[created] {
					t.Errorf("Log(one.md) = %v, want the merge, the conversion and its creation", cmds)
				}
				b, err := v.Blame(ctx, "/memories/notes/one.md", "")
				if err != nil || len(b.Lines) != 3 || b.Lines[1].Commit != created {
					t.Errorf("Blame(one.md) = %+v, %v; want its middle line from its creation", b, err)
				}
			}
			if err := first.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			tree, err := exec.Command(gittest.Git(t), "--git-dir", strings.TrimPrefix(url, "file://"), "ls-tree", "-r", "--name-only", "main").Output()
			if err != nil || strings.Contains(string(tree), "notes") || strings.Contains(string(tree), ".md") {
				t.Errorf("the remote's tree after the merge =\n%s%v\nwant no name in it", tree, err)
			}
			if !converterMerges {
				// The plain clone's own commits, which name deux.md in
				// the clear, stay on that clone: the merge goes on top
				// of the conversion alone.
				if found := vaulttest.FindInObjects(t, strings.TrimPrefix(url, "file://"), []byte("deux.md")); len(found) > 0 {
					t.Errorf("the remote holds the plain clone's names in %v", found)
				}
				if recs := vaulttest.Log(t, b, vault.LogOptions{Limit: 1}); len(recs[0].Parents) != 1 {
					t.Errorf("the plain clone's merge = %+v, want it on top of the conversion alone", recs[0])
				}
			}
		})
	}
}
