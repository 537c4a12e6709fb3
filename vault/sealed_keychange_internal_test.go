package vault

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// rotateByHand commits what a key rotation leaves, built here from the
// format's parts rather than by memvault's writer: a new .memvault/key, and
// every memory file sealed again under it, its name and its blob.
func rotateByHand(t *testing.T, v *Vault) *seal.Key {
	t.Helper()
	ctx := context.Background()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := snap.recipientsContent()
	rs, err := v.keys.parseRecipients(content)
	if err != nil {
		t.Fatal(err)
	}
	k, err := seal.NewGeneration(false)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := encrypt(k.Marshal(), rs)
	if err != nil {
		t.Fatal(err)
	}
	// The new keychain chains the old key, and the key file that wrapped it.
	old := snap.names.key()
	oldChain, err := v.keychainAt(snap.root, old)
	if err != nil {
		t.Fatal(err)
	}
	oldFile, err := v.repo.Lookup(snap.root, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := chainFor(k, old, oldFile.Hash, oldChain)
	if err != nil {
		t.Fatal(err)
	}
	changes := []gitlog.Change{{Op: gitlog.Put, Path: keyPath, Data: kb}, {Op: gitlog.Put, Path: keychainPath, Data: chain}, {Op: gitlog.Delete, Path: memDir}}
	files, err := snap.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		plain, err := snap.ReadFile(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := codecOf(k, nil).treePath(p)
		if err != nil {
			t.Fatal(err)
		}
		changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: tp, Data: mustBlob(t, k, string(plain), rs)})
	}
	msg, err := k.SealMessage(seal.Message{Text: formatMessage("rekey", []trailer{{trCommand, "rekey"}}), AuthorName: "memvault", AuthorEmail: "agent@memvault"})
	if err != nil {
		t.Fatal(err)
	}
	head, err := v.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Unlock()
	if _, err := w.Commit(context.Background(), head, changes, gitlog.CommitInfo{Message: msg, Sign: v.sign.sign}); err != nil {
		t.Fatal(err)
	}
	return k
}

// Readers and undo across a change of the vault key: paths are paired by
// their plaintext, what is brought back from before is sealed again under the
// current key, and a file's history and blame cross the change.
func TestSealedAcrossKeyChange(t *testing.T) {
	ctx := context.Background()
	v, _ := newTestVault(t)
	defer v.Close()
	put := func(p, text string) string { return mustCreate(t, v, p, text) }
	first := put("/memories/a/notes.md", "one\ntwo\n")
	put("/memories/b.md", "b\n")
	before := put("/memories/a/notes.md", "one\ntwo\nthree\n")
	old, _ := v.currentKey()
	k := rotateByHand(t, v)
	if now, _ := v.currentKey(); now == nil || sameKey(now, old) || !sameKey(now, k) {
		t.Fatal("the rotation did not change the key")
	}
	put("/memories/a/notes.md", "one\nTWO\nthree\n")
	put("/memories/c.md", "c\n")

	ch, err := v.Show(ctx, "main~2")
	if err != nil || ch.Command != "rekey" || len(ch.Files) != 0 {
		t.Errorf("Show(the rotation) = %+v, %v; want a rekey that changed no plaintext", ch, err)
	}
	fcs, err := v.Diff(ctx, before, "main", "")
	if err != nil || len(fcs) != 2 || fcs[0].Path != "/memories/a/notes.md" || fcs[0].Status != Modified ||
		!strings.Contains(fcs[0].Diff, "-two\n+TWO\n") || fcs[1].Path != "/memories/c.md" || fcs[1].Status != Added {
		t.Errorf("Diff(before the rotation, main) = %+v, %v; want notes.md modified and c.md added", fcs, err)
	}
	if fcs, err := v.Diff(ctx, before, "main", "/memories/a"); err != nil || len(fcs) != 1 {
		t.Errorf("Diff(before, main, /memories/a) = %+v, %v; want notes.md", fcs, err)
	}
	recs, err := v.Log(ctx, LogOptions{Path: "/memories/a/notes.md"})
	var cmds []string
	for _, r := range recs {
		cmds = append(cmds, r.Command)
	}
	if err != nil || strings.Join(cmds, " ") != "create rekey create create" {
		t.Errorf("Log(a/notes.md) = %v, %v; want its history through the rotation", cmds, err)
	}
	b, err := v.Blame(ctx, "/memories/a/notes.md", "")
	if err != nil || len(b.Lines) != 3 || b.Lines[0].Commit != first || b.Lines[2].Commit != before {
		t.Errorf("Blame(a/notes.md) = %+v, %v; want lines 1 and 3 from before the rotation", b, err)
	}

	// Restore and rollback bring back what was sealed under the old key,
	// sealed again under the new one.
	if _, err := v.Restore(ctx, Meta{}, "/memories/a/notes.md", first); err != nil {
		t.Fatalf("Restore across the rotation: %v", err)
	}
	read := func(p string) string {
		s, _ := v.Snapshot(ctx)
		b, err := s.ReadFile(ctx, p)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	}
	if got := read("/memories/a/notes.md"); got != "one\ntwo\n" {
		t.Errorf("after Restore(a/notes.md, first), it holds %q", got)
	}
	if _, err := v.Rollback(ctx, Meta{}, before); err != nil {
		t.Fatalf("Rollback across the rotation: %v", err)
	}
	s, _ := v.Snapshot(ctx)
	files, _ := s.Files(ctx)
	if !slices.Equal(files, []string{"/memories/a/notes.md", "/memories/b.md"}) || read("/memories/a/notes.md") != "one\ntwo\nthree\n" {
		t.Errorf("after Rollback(before), files %v, notes.md %q", files, read("/memories/a/notes.md"))
	}
	if now, _ := v.currentKey(); !sameKey(now, k) {
		t.Error("the rollback changed the key")
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("Fsck after the undos across the rotation = %q, %v", problems, err)
	}
	// Revert of the rotation itself changes no plaintext: nothing to do.
	recs, _ = v.Log(ctx, LogOptions{Command: "rekey"})
	if res, err := v.Revert(ctx, Meta{}, recs[0].Commit); err != nil || res.Commit != "" {
		t.Errorf("Revert(the rotation) = %+v, %v; want nothing to do", res, err)
	}
}
