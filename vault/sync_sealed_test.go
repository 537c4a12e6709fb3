package vault_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
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
	// Each needle is one no sealed name (base32) or trailer (base64) can hold
	// by chance: " spot\x00" is how a tree would name the folder in clear.
	for _, needle := range []string{"shared.md", " spot\x00", "spot.conflict", "inner.md", "conflict", "customers", "Memory-", "merge origin"} {
		if found := vaulttest.FindInObjects(t, strings.TrimPrefix(url, "file://"), []byte(needle)); len(found) > 0 {
			t.Errorf("the remote holds %q in %v", needle, found)
		}
	}
}

// TestSyncSealedAcrossRotation: one clone removes a recipient, which rotates
// the vault key and re-seals every name, while the other writes under the old
// key; whichever of them merges, the merge takes the new key, keeps both
// sides' writes, and leaves a tree whose every name and size opens under it,
// which the other side then takes as a fast-forward.
func TestSyncSealedAcrossRotation(t *testing.T) {
	for _, rotatorMerges := range []bool{false, true} {
		t.Run(map[bool]string{false: "the other side merges", true: "the rotating side merges"}[rotatorMerges], func(t *testing.T) {
			url := fileRemote(t)
			a, b := pairIn(t, url, newClock(time.Second), true)
			extra, err := age.GenerateX25519Identity()
			if err != nil {
				t.Fatal(err)
			}
			write(t, a, "/memories/notes/one.md", "one\ntwo\nthree\n")
			write(t, a, "/memories/notes/two.md", "two\n")
			write(t, a, "/memories/gone.md", "gone\n")
			if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{extra.Recipient().String()}}); err != nil {
				t.Fatal(err)
			}
			mustSync(t, a)
			syncAccept(t, b)

			// a rotates; b writes under the old key.
			if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{extra.Recipient().String()}}); err != nil {
				t.Fatal(err)
			}
			write(t, a, "/memories/notes/one.md", "one from a\ntwo\nthree\n")
			write(t, b, "/memories/notes/one.md", "one\ntwo\nthree from b\n")
			write(t, b, "/memories/notes/b.md", "b's\n")
			rename(t, b, "/memories/notes/two.md", "/memories/notes/deux.md")
			// Deleted on the side that kept the key: the rotation only
			// encrypted it anew, which does not bring it back.
			if err := b.Update(ctx, vault.Meta{Command: "delete"}, func(tx *vault.Tx) error { return tx.Remove("/memories/gone.md") }); err != nil {
				t.Fatal(err)
			}
			first, second := a, b
			if rotatorMerges {
				first, second = b, a
			}
			syncAccept(t, first)
			if res := syncAccept(t, second); res.Action != "merge" {
				t.Fatalf("Sync = %+v, want a merge", res)
			}
			if res := syncAccept(t, first); res.Action != "fast-forward" {
				t.Fatalf("Sync after the merge = %+v, want a fast-forward", res)
			}
			for _, v := range []*vault.Vault{a, b} {
				s := wantMergedNotes(t, v)
				es, err := s.List(ctx, "/memories/notes")
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range es {
					if e.Err != nil {
						t.Errorf("List entry %s: %v", e.Name, e.Err)
					}
				}
				// The merge's message opens under the key its tree holds.
				if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
					t.Errorf("Fsck = %v, %v", problems, err)
				}
			}
		})
	}
}

func syncAccept(t *testing.T, v *vault.Vault) vault.SyncResult {
	t.Helper()
	res, err := v.Sync(ctx, vault.SyncOptions{Host: "test", AcceptRecipients: true})
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return res
}

// TestSyncSealedRecipientsAddedOnBothSides: each clone adds a recipient of
// its own. The key stays (adding re-encrypts the key file, not the key), so
// the merge is one of one key; the key file, which no merge by lines could
// keep readable, is encrypted to the merged recipients, and each added
// identity opens it.
func TestSyncSealedRecipientsAddedOnBothSides(t *testing.T) {
	url := fileRemote(t)
	a, b := pairIn(t, url, newClock(time.Second), true)
	write(t, a, "/memories/one.md", "one\n")
	mustSync(t, a)
	mustSync(t, b)
	var ids []string
	for i, v := range []*vault.Vault{a, b} {
		path := filepath.Join(t.TempDir(), "id")
		info, err := keys.CreateIdentity(path, keys.IdentityOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, path)
		if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{info.Recipients[0].Key}}); err != nil {
			t.Fatalf("ChangeRecipients %d: %v", i, err)
		}
	}
	write(t, b, "/memories/two.md", "two\n")
	syncAccept(t, a)
	if res := syncAccept(t, b); res.Action != "merge" || len(res.Conflicts) != 0 {
		t.Fatalf("Sync = %+v, want a merge with no conflict", res)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gittest.Git(t), "--git-dir", b.Dir(), "cat-file", "blob", "main:.memvault/key").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := vault.Decrypt(vault.Options{IdentityFile: id}, out); err != nil {
			t.Errorf("the merged key file does not open for %s: %v", id, err)
		}
	}
	for _, p := range []string{"/memories/one.md", "/memories/two.md"} {
		if _, err := read(t, b, p); err != nil {
			t.Errorf("read %s: %v", p, err)
		}
	}
}

// wantMergedNotes checks that v holds what the merge of the two sides'
// notes in the sealed merge tests makes: a's edit and b's together, b's new
// file, and the file a renamed, and returns the snapshot it read.
func wantMergedNotes(t *testing.T, v *vault.Vault) *vault.Snapshot {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Files(ctx)
	if err != nil || strings.Join(files, " ") != "/memories/notes/b.md /memories/notes/deux.md /memories/notes/one.md" {
		t.Errorf("Files = %v, %v", files, err)
	}
	for p, want := range map[string]string{
		"/memories/notes/one.md":  "one from a\ntwo\nthree from b\n",
		"/memories/notes/b.md":    "b's\n",
		"/memories/notes/deux.md": "two\n",
	} {
		if got, err := read(t, v, p); err != nil || got != want {
			t.Errorf("read %s = %q, %v; want %q", p, got, err, want)
		}
	}
	return s
}
