package vault_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// A collaborator's delete, dated 2001 by hand, made main@{1h} resolve to it
// (the first commit along first parents whose date was at or before an hour
// ago), so "as it was an hour ago" was the memory deleted, and a rollback
// there found nothing to roll back. Times come from this clone's own record
// of when its main moved.
func TestBackdatedCommitDoesNotMoveTime(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := hostilePair(t, url)
	write(t, a, "/memories/notes.md", "keep me\n")
	mustSync(t, a)
	mustSync(t, b)
	before := head(t, b)
	t0 := time.Now()
	time.Sleep(10 * time.Millisecond)

	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
	tree := h.Set(h.Head()+"^{tree}", "memories/notes.md", gittest.TreeEntry{})
	const y2001 = "978307200 +0000"
	body := fmt.Sprintf("tree %s\nparent %s\nauthor claude <c@example.invalid> %s\ncommitter memvault <memvault@localhost> %s\n\n"+
		"delete /memories/notes.md\n\nMemory-Command: delete\nMemory-Path: /memories/notes.md\n", tree, h.Head(), y2001, y2001)
	deleted := h.Loose("commit", []byte(body))
	h.Push(deleted)
	if res := mustSync(t, b); res.Action != "fast-forward" {
		t.Fatalf("sync = %+v, want a fast-forward", res)
	}

	at := "main@{" + t0.UTC().Format(time.RFC3339Nano) + "}"
	if got, err := b.Resolve(ctx, at); err != nil || got != before {
		t.Errorf("Resolve(%s) = %s, %v; want %s, main before the sync", at, got, err, before)
	}
	if got, err := b.Resolve(ctx, "@{0s}"); err != nil || got != deleted {
		t.Errorf("Resolve(@{0s}) = %s, %v; want %s, main now", got, err, deleted)
	}
	// An hour ago this clone did not exist: no answer, rather than the
	// commit that claims 2001.
	if got, err := b.Resolve(ctx, "main@{1h}"); !errors.Is(err, vault.ErrUnknownRevision) {
		t.Errorf("Resolve(main@{1h}) = %s, %v; want ErrUnknownRevision", got, err)
	}
	// A commit's own date decides nothing either.
	if got, err := b.Resolve(ctx, deleted+"@{1h}"); !errors.Is(err, vault.ErrUnknownRevision) {
		t.Errorf("Resolve(COMMIT@{1h}) = %s, %v; want ErrUnknownRevision", got, err)
	}
}
