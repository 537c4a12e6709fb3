package vault_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestRestore(t *testing.T) {
	v := vaulttest.New(t)
	c1 := put(t, v, "/memories/d/a", "a1")
	put(t, v, "/memories/d/b", "b1")
	put(t, v, "/memories/d/a", "a2")
	put(t, v, "/memories/f", "f")
	res, err := v.Restore(ctx, vault.Meta{ToolUseID: "toolu_r"}, "/memories/d/a", c1)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/d/a"); got != "a1" || res.Commit == "" || res.Source != c1 ||
		len(res.Files) != 1 || res.Files[0] != (vault.FileChange{Path: "/memories/d/a", Status: vault.Modified}) {
		t.Errorf("Restore(d/a, c1) = %+v; d/a = %q, want a1", res, got)
	}
	recs, _ := v.Log(ctx, vault.LogOptions{Limit: 1})
	if r := recs[0]; r.Command != "restore" || r.Source != c1 || r.Path != "/memories/d/a" || r.ToolUseID != "toolu_r" || r.Commit != res.Commit {
		t.Errorf("restore record = %+v", r)
	}
	// The restored file is the very ciphertext of then: no new blob.
	if a, b := blobOf(t, v, c1, "/memories/d/a"), blobOf(t, v, "main", "/memories/d/a"); a != b {
		t.Errorf("restored blob %s, want the old one %s", b, a)
	}
	// Again: nothing to do.
	if res, err := v.Restore(ctx, vault.Meta{}, "/memories/d/a", c1); err != nil || res.Commit != "" || len(res.Files) != 0 {
		t.Errorf("Restore again = %+v, %v; want no commit", res, err)
	}
	// A directory gets exactly its files of then.
	if _, err := v.Restore(ctx, vault.Meta{}, "/memories/d", c1); err != nil {
		t.Fatal(err)
	}
	if s, _ := v.Snapshot(ctx); mustKind(t, s, "/memories/d/b") != vault.KindNone || mustKind(t, s, "/memories/f") != vault.KindFile {
		t.Errorf("after Restore(d, c1), d/b is still there or f is gone")
	}
	n := len(mustLog(t, v))
	if _, err := v.Restore(ctx, vault.Meta{}, "/memories/f", c1); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("Restore of a path absent then: err = %v, want ErrNotExist", err)
	}
	put(t, v, "/memories/x", "file")
	if _, err := v.Restore(ctx, vault.Meta{}, "/memories/x/y", c1); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("Restore under a file: err = %v, want ErrNotExist", err)
	}
	if _, err := v.Restore(ctx, vault.Meta{}, "/memories/d/a", "nope"); !errors.Is(err, vault.ErrUnknownRevision) {
		t.Errorf("Restore at an unknown revision: err = %v, want ErrUnknownRevision", err)
	}
	if got := len(mustLog(t, v)); got != n+1 {
		t.Errorf("failed restores made %d commits", got-n-1)
	}
}

func TestRestoreUnderAFileNow(t *testing.T) {
	v := vaulttest.New(t)
	c1 := put(t, v, "/memories/d/a", "1")
	rm(t, v, "/memories/d")
	put(t, v, "/memories/d", "now a file")
	if _, err := v.Restore(ctx, vault.Meta{}, "/memories/d/a", c1); !errors.Is(err, vault.ErrNotDir) || !strings.Contains(err.Error(), "/memories/d is a file now") {
		t.Errorf("Restore(d/a) where d is a file now: err = %v, want ErrNotDir naming /memories/d", err)
	}
	if _, err := v.Restore(ctx, vault.Meta{}, "/memories/d", c1); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/d/a"); got != "1" {
		t.Errorf("after Restore(d), d/a = %q, want 1", got)
	}
}

func TestRevert(t *testing.T) {
	v := vaulttest.New(t)
	put(t, v, "/memories/a", "1\n2\n3\n4\n5\n")
	mid := put(t, v, "/memories/a", "1\nTWO\n3\n4\n5\n")
	put(t, v, "/memories/a", "1\nTWO\n3\n4\nFIVE\n")
	res, err := v.Revert(ctx, vault.Meta{Session: "s"}, mid)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/a"); got != "1\n2\n3\n4\nFIVE\n" {
		t.Errorf("after Revert(mid), a = %q; want the later edit kept", got)
	}
	recs, _ := v.Log(ctx, vault.LogOptions{Limit: 1})
	if r := recs[0]; r.Command != "revert" || r.Source != mid || r.Path != "/memories/a" || r.Commit != res.Commit || r.Session != "s" {
		t.Errorf("revert record = %+v", r)
	}
	if res, err := v.Revert(ctx, vault.Meta{}, mid); err != nil || res.Commit != "" {
		t.Errorf("Revert(mid) again = %+v, %v; want nothing to do", res, err)
	}
	// A later edit of the same lines: a conflict, and nothing changes.
	edit := put(t, v, "/memories/a", "1\n2\n3\n4\nfive!\n")
	put(t, v, "/memories/a", "1\n2\n3\n4\nfive?\n")
	n := len(mustLog(t, v))
	_, err = v.Revert(ctx, vault.Meta{}, edit)
	var ce *vault.ConflictError
	if !errors.Is(err, vault.ErrConflict) || !errors.As(err, &ce) || strings.Join(ce.Paths, ",") != "/memories/a" || ce.Commit != edit {
		t.Errorf("Revert of an edit edited again: err = %v, want a ConflictError naming /memories/a", err)
	}
	if got, _ := read(t, v, "/memories/a"); got != "1\n2\n3\n4\nfive?\n" || len(mustLog(t, v)) != n {
		t.Errorf("a failed revert changed the vault: a = %q", got)
	}
}

func TestRevertCreateAndRename(t *testing.T) {
	v := vaulttest.New(t)
	put(t, v, "/memories/keep", "k")
	c := put(t, v, "/memories/new", "n")
	r := mv(t, v, "/memories/keep", "/memories/moved/keep")
	if _, err := v.Revert(ctx, vault.Meta{}, r); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Revert(ctx, vault.Meta{}, c); err != nil {
		t.Fatal(err)
	}
	s, _ := v.Snapshot(ctx)
	es, _ := s.List(ctx, "/memories")
	if len(es) != 1 || es[0].Name != "keep" {
		t.Errorf("after reverting the create and the rename, /memories holds %+v, want keep only", es)
	}
	// Reverting a create whose file was edited since: a conflict.
	c2 := put(t, v, "/memories/n2", "x")
	put(t, v, "/memories/n2", "y")
	if _, err := v.Revert(ctx, vault.Meta{}, c2); !errors.Is(err, vault.ErrConflict) {
		t.Errorf("Revert of a create edited since: err = %v, want ErrConflict", err)
	}
}

func TestRollback(t *testing.T) {
	v := vaulttest.New(t)
	put(t, v, "/memories/a", "1")
	cp, err := v.Checkpoint(ctx, "before", "", "before the mess")
	if err != nil {
		t.Fatal(err)
	}
	put(t, v, "/memories/a", "2")
	put(t, v, "/memories/b", "3")
	res, err := v.Rollback(ctx, vault.Meta{}, "before")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/a"); got != "1" || len(res.Files) != 2 || res.Source != cp.Commit {
		t.Errorf("after Rollback(before), a = %q, result %+v", got, res)
	}
	if res, err := v.Rollback(ctx, vault.Meta{}, "before"); err != nil || res.Commit != "" {
		t.Errorf("Rollback again = %+v, %v; want nothing to do", res, err)
	}
	// The rollback is itself undone by rolling back to its parent.
	if _, err := v.Rollback(ctx, vault.Meta{}, "main~1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/b"); got != "3" {
		t.Errorf("after rolling back the rollback, b = %q, want 3", got)
	}
	// To the init commit: no memories at all.
	recs := mustLog(t, v)
	if _, err := v.Rollback(ctx, vault.Meta{}, recs[len(recs)-1].Commit); err != nil {
		t.Fatal(err)
	}
	s, _ := v.Snapshot(ctx)
	if es, err := s.List(ctx, "/memories"); err != nil || len(es) != 0 {
		t.Errorf("after Rollback to init, /memories = %+v, %v", es, err)
	}
	if rs, err := s.Recipients(ctx); err != nil || len(rs) != 1 {
		t.Errorf("after Rollback to init, recipients = %v, %v; want them kept", rs, err)
	}
}

// TestUndoWritesNoPlaintext merges, restores and rolls back, then looks for the
// content on disk.
func TestUndoWritesNoPlaintext(t *testing.T) {
	v := vaulttest.New(t)
	marker := "MARKER-51c0e-undo"
	put(t, v, "/memories/a", "x\n"+marker+"-1\ny\nz\nw\n")
	mid := put(t, v, "/memories/a", "x\n"+marker+"-2\ny\nz\nw\n")
	put(t, v, "/memories/a", "x\n"+marker+"-2\ny\nz\n"+marker+"-3\n")
	if _, err := v.Revert(ctx, vault.Meta{}, mid); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/a"); !strings.Contains(got, marker+"-1") || !strings.Contains(got, marker+"-3") {
		t.Fatalf("merged content = %q", got)
	}
	if _, err := v.Rollback(ctx, vault.Meta{}, "main~2"); err != nil {
		t.Fatal(err)
	}
	if found := vaulttest.FindInRepo(t, v.Dir(), []byte(marker)); len(found) > 0 {
		t.Errorf("plaintext found on disk in %v", found)
	}
}

// TestRevertFollowsRenames reverts an edit of a file that has been moved since:
// the revert applies where the file is now.
func TestRevertFollowsRenames(t *testing.T) {
	v := vaulttest.New(t)
	put(t, v, "/memories/todo", "1\n2\n3\n4\n5\n")
	edit := put(t, v, "/memories/todo", "1\nTWO\n3\n4\n5\n")
	mv(t, v, "/memories/todo", "/memories/work/todo")
	mv(t, v, "/memories/work", "/memories/archive")
	put(t, v, "/memories/archive/todo", "1\nTWO\n3\n4\nFIVE\n")
	if _, err := v.Revert(ctx, vault.Meta{}, edit); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, v, "/memories/archive/todo"); got != "1\n2\n3\n4\nFIVE\n" {
		t.Errorf("after reverting an edit of a file moved since, archive/todo = %q", got)
	}
	if k := mustKind(t, mustSnapshot(t, v), "/memories/todo"); k != vault.KindNone {
		t.Errorf("the revert brought back /memories/todo (%v)", k)
	}
}

func mustSnapshot(t *testing.T, v *vault.Vault) *vault.Snapshot {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
