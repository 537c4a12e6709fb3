package vault_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

// A conversion that arrives is a plain parent with a sealed child, and
// admission checks the child's tree whole, as after a rotation: an entry the
// parent holds too is new under the new key. A writer's conversion made by
// hand (git plumbing, seal's parts and age) is taken as a fast-forward; one
// that leaves a file under its plain name, byte for byte the parent's entry,
// is refused by that name.
func TestSyncAdmitsConversionWhole(t *testing.T) {
	for _, leftover := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "a plain name left"}[leftover], func(t *testing.T) {
			url := gittest.Bare(t, t.TempDir(), "remote")
			a, b, opts := hostilePairIn(t, url, false)
			write(t, a, "/memories/x/keep.md", "kept\n")
			write(t, a, "/memories/plain.md", "plain\n")
			mustSync(t, a)
			mustSync(t, b)
			h := gittest.NewHostile(t, url)
			h.SigningKey = keys.SigningKeyFile(opts.IdentityFile)
			r := recipientOf(t, opts)
			k, err := seal.NewKey()
			if err != nil {
				t.Fatal(err)
			}
			good := h.Head()
			tree := h.Set(good+"^{tree}", ".memvault/key", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(ageFile(t, k.Marshal(), r))})
			tree = h.Set(tree, ".memvault/format", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte("2\n"))})
			tree = h.Set(tree, "memories/x", gittest.TreeEntry{})
			tree = h.Set(tree, hostileNames{k}.path("memories/x/keep.md"), gittest.TreeEntry{Mode: "100644", Hash: h.Blob(sealedBlob(t, k, []byte("kept\n"), r))})
			if !leftover {
				tree = h.Set(tree, "memories/plain.md", gittest.TreeEntry{})
				tree = h.Set(tree, hostileNames{k}.path("memories/plain.md"), gittest.TreeEntry{Mode: "100644", Hash: h.Blob(sealedBlob(t, k, []byte("plain\n"), r))})
			}
			msg, err := k.SealMessage(seal.Message{Text: "seal\n\nMemory-Command: seal\n", AuthorName: "memvault", AuthorEmail: "agent@memvault"})
			if err != nil {
				t.Fatal(err)
			}
			conv := h.Commit(tree, msg, good)
			h.Push(conv)
			before := head(t, b)
			res, err := b.Sync(ctx, vault.SyncOptions{Host: "test"})
			if leftover {
				if !errors.Is(err, vault.ErrRefused) || !strings.Contains(err.Error(), `"memories/plain.md": a name not sealed under this vault's key`) {
					t.Fatalf("Sync of a conversion that left a plain name = %v, want ErrRefused naming it", err)
				}
				if got := head(t, b); got != before {
					t.Errorf("head moved from %s to %s", before, got)
				}
				return
			}
			if err != nil || res.Action != "fast-forward" {
				t.Fatalf("Sync of a writer's conversion = %+v, %v; want a fast-forward", res, err)
			}
			for p, want := range map[string]string{"/memories/x/keep.md": "kept\n", "/memories/plain.md": "plain\n"} {
				if got, err := read(t, b, p); err != nil || got != want {
					t.Errorf("read %s after the conversion = %q, %v", p, got, err)
				}
			}
			if recs, err := b.Log(ctx, vault.LogOptions{Limit: 1}); err != nil || recs[0].Command != "seal" {
				t.Errorf("Log after the conversion = %+v, %v; want its message opened", recs, err)
			}
		})
	}
}
