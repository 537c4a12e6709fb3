package vault_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// recipientKeys are the keys of v's recipients at its head.
func recipientKeys(t *testing.T, v *vault.Vault) []string {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := s.Recipients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.Key)
	}
	return out
}

// forcePush points the remote's main at commit, as a host that rewrites its
// own refs can.
func forcePush(h *gittest.Hostile, url, commit string) {
	h.Git("update-ref", "refs/heads/main", commit)
	h.Git("push", "-q", "--force", url, "refs/heads/main:refs/heads/main")
}

// Alice removes Eve; the host puts main back before the removal and a
// writer's commit (or an old one) repeats Eve's key line at the top of the
// recipients file. Compared with the merge base the remote's file holds the
// same keys, and a merge by lines kept the line it added: Eve read what Alice
// wrote next while the notice said only comments changed. The merge is of
// sets: a key the remote did not add since the base stays removed, and a key
// it did add (the host went back to before Eve was added, and adds her) is
// compared with what Alice holds now, named, and needs accepting.
func TestRemovedRecipientNotBroughtBack(t *testing.T) {
	for _, tc := range []struct {
		name        string
		beforeEve   bool                    // the host goes back to before Eve was added
		top         func(eve string) string // what the remote puts above the file
		wantRefused bool
	}{
		{"key line repeated", false, func(eve string) string { return eve + "\n" }, false},
		{"comment only", false, func(string) string { return "# the team\n" }, false},
		{"key brought back", true, func(eve string) string { return eve + "\n" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := gittest.Bare(t, t.TempDir(), "remote")
			a, _, opts := hostilePair(t, url)
			_, eve := newIdentity(t, keys.IdentityOptions{})
			write(t, a, "/memories/notes.md", "before Eve\n")
			mustSync(t, a)
			beforeEve := head(t, a)
			if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{eve}}); err != nil {
				t.Fatal(err)
			}
			mustSync(t, a)
			withEve := head(t, a)
			if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{eve}}); err != nil {
				t.Fatal(err)
			}
			mustSync(t, a)

			h := gittest.NewHostile(t, url)
			h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
			on := withEve
			if tc.beforeEve {
				on = beforeEve
			}
			file := tc.top(eve) + h.Git("cat-file", "blob", on+":.memvault/recipients") + "\n"
			tree := h.Set(on+"^{tree}", ".memvault/recipients", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte(file))})
			forcePush(h, url, h.Commit(tree, "recipients\n", on))

			// The remote went back and grew a commit: a fork, refused until
			// a person looked; the recipients are judged once they did.
			before := head(t, a)
			if _, err := a.Sync(ctx, vault.SyncOptions{Host: "test"}); !errors.Is(err, vault.ErrFork) {
				t.Fatalf("Sync with a remote that went back and grew a commit = %v, want ErrFork", err)
			}
			res, err := a.Sync(ctx, vault.SyncOptions{Host: "test", AcceptFork: true})
			if !tc.wantRefused {
				if err != nil {
					t.Errorf("Sync = %v; a remote that added no key needs no accepting", err)
					if _, err := a.Sync(ctx, vault.SyncOptions{Host: "test", AcceptRecipients: true, AcceptWriters: true, AcceptFork: true}); err != nil {
						t.Fatal(err)
					}
				}
				if got := recipientKeys(t, a); slices.Contains(got, eve) {
					t.Errorf("recipients after the merge = %v; Eve came back", got)
				}
				return
			}
			if !errors.Is(err, vault.ErrRecipientsChanged) {
				t.Fatalf("Sync = %+v, %v; want ErrRecipientsChanged", res, err)
			}
			if len(res.RecipientsAdded) != 1 || res.RecipientsAdded[0].Key != eve || len(res.RecipientsRemoved) != 0 {
				t.Errorf("Sync says added %v, removed %v; want Eve added back", res.RecipientsAdded, res.RecipientsRemoved)
			}
			if head(t, a) != before {
				t.Errorf("a refused sync moved the branch")
			}
			// Refused at every door: a pull, and a pull that skips refused entries.
			for _, o := range []vault.SyncOptions{{Mode: vault.SyncPull, AcceptFork: true}, {SkipRefused: true, AcceptFork: true}} {
				if _, err := a.Sync(ctx, o); !errors.Is(err, vault.ErrRecipientsChanged) {
					t.Errorf("Sync(%+v) = %v, want ErrRecipientsChanged", o, err)
				}
			}
			// Taken when accepted, as a set: Eve once.
			if _, err := a.Sync(ctx, vault.SyncOptions{Host: "test", AcceptRecipients: true, AcceptFork: true}); err != nil {
				t.Fatal(err)
			}
			got := recipientKeys(t, a)
			if n := len(slices.DeleteFunc(slices.Clone(got), func(k string) bool { return k != eve })); n != 1 {
				t.Errorf("recipients after accepting = %v, want Eve once", got)
			}
		})
	}
}
