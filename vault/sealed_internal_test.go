package vault

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// hostileCommit commits changes on main as they are, with message, through
// gitlog and not through the vault's writer: what a remote or a damaged tool
// could leave in a sealed vault.
func hostileCommit(t *testing.T, v *Vault, message string, changes ...gitlog.Change) {
	t.Helper()
	ctx := context.Background()
	head, err := v.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Unlock()
	sig := gitlog.Signature{Name: "x", Email: "x@x"}
	if _, err := w.Commit(context.Background(), head, changes, gitlog.CommitInfo{Message: message, Author: sig, Committer: sig}); err != nil {
		t.Fatal(err)
	}
}

// What a sealed vault's tree and history may hold that its key did not seal:
// a name in the clear, a name sealed for another folder, a blob whose size
// header or padding memvault did not write, a commit message that does not
// open. Each is refused alone, as a bad entry or an unbelieved record; the
// rest of the vault still reads.
func TestSealedHostileEntries(t *testing.T) {
	ctx := context.Background()
	v, _ := newTestVault(t)
	defer v.Close()
	mustCreate(t, v, "/memories/good.md", "good\n")
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := snap.names.key()
	rs, err := (&Tx{Snapshot: snap}).recipients()
	if err != nil {
		t.Fatal(err)
	}
	good, _ := v.repo.Lookup(snap.root, "memories/"+mustSeal(t, k, "/memories", "good.md"))
	other, _ := seal.NewKey()
	badSize, _ := sealBlob(other, []byte("other key\n"), rs) // a size header under another key
	unpadded, _ := encrypt([]byte("no frame\n"), rs)
	ageHdr, err := age.ExtractHeader(bytes.NewReader(unpadded))
	if err != nil {
		t.Fatal(err)
	}
	hdr, _ := k.SealSize(9, ageHdr) // a size that opens, on plaintext that is no frame
	noFrame := append(hdr, unpadded...)
	elsewhere := mustSeal(t, k, "/memories/sub", "moved.md") // sealed for another folder
	hostileCommit(t, v, "create /memories/clear.md\n\nMemory-Command: create\n",
		gitlog.Change{Op: gitlog.Link, Path: "memories/clear.md", Hash: good.Hash},
		gitlog.Change{Op: gitlog.Link, Path: "memories/" + elsewhere, Hash: good.Hash},
		gitlog.Change{Op: gitlog.Put, Path: "memories/" + mustSeal(t, k, "/memories", "badsize.md"), Data: badSize},
		gitlog.Change{Op: gitlog.Put, Path: "memories/" + mustSeal(t, k, "/memories", "noframe.md"), Data: noFrame},
	)
	forged, _ := other.SealMessage(seal.Message{Text: "create /memories/good.md\n\nMemory-Command: create\nTool-Use-Id: forged\n"})
	hostileCommit(t, v, forged, gitlog.Change{Op: gitlog.Put, Path: "memories/" + mustSeal(t, k, "/memories", "later.md"), Data: mustBlob(t, k, "later\n", rs)})

	snap, err = v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	es, err := snap.List(ctx, "/memories")
	if err != nil {
		t.Fatalf("List = %v", err)
	}
	var okNames, bad []string
	for _, e := range es {
		if e.Err != nil {
			if !errors.Is(e.Err, ErrBadEntry) {
				t.Errorf("List entry error %v, want ErrBadEntry", e.Err)
			}
			if strings.Contains(e.Err.Error(), elsewhere) {
				t.Errorf("List entry error %q quotes the stored name", e.Err)
			}
			bad = append(bad, e.Name)
			continue
		}
		okNames = append(okNames, e.Name)
	}
	// badsize.md lists by name but its size does not open; the clear name and
	// the one sealed elsewhere do not open at all.
	if strings.Join(okNames, " ") != "good.md later.md noframe.md" || len(bad) != 3 {
		t.Errorf("List = ok %v, bad %v; want ok [good.md later.md noframe.md] and 3 bad", okNames, bad)
	}
	if got, err := snap.ReadFile(ctx, "/memories/good.md"); err != nil || string(got) != "good\n" {
		t.Errorf("ReadFile(good.md) = %q, %v", got, err)
	}
	if _, err := snap.ReadFile(ctx, "/memories/noframe.md"); !errors.Is(err, ErrBadEntry) {
		t.Errorf("ReadFile(noframe.md) = %v, want ErrBadEntry", err)
	}
	// The listing shows the clear name as it is stored; a read of it says
	// what is wrong with it, as a read of a bad entry does in a plain vault.
	if _, err := snap.ReadFile(ctx, "/memories/clear.md"); !errors.Is(err, ErrBadEntry) || !strings.Contains(err.Error(), "/memories/clear.md: a name not sealed") {
		t.Errorf("ReadFile(clear.md) = %v, want ErrBadEntry: a name not sealed under this vault's key", err)
	}
	// The sealed name of good.md, read as a path, is no bad entry: it opens,
	// to another name.
	if _, err := snap.ReadFile(ctx, "/memories/"+mustSeal(t, k, "/memories", "good.md")); !errors.Is(err, ErrNotExist) {
		t.Errorf("ReadFile(good.md's sealed name) = %v, want ErrNotExist", err)
	}
	// Status reads the rest and names what a read refuses: the names that
	// do not open, and the blob whose padding memvault did not write.
	st, err := v.Status(ctx)
	if err != nil {
		t.Fatalf("Status = %v, want the vault's status", err)
	}
	var badNames []string
	for _, b := range st.BadEntries {
		badNames = append(badNames, b.Path+": "+b.Reason)
	}
	wantBad := []string{"/memories/" + elsewhere + ": a name not sealed under this vault's key", "/memories/clear.md: a name not sealed under this vault's key", "/memories/noframe.md: padding memvault did not write"}
	slices.Sort(wantBad)
	if !slices.Equal(badNames, wantBad) || st.ConflictsUnknown != "" {
		t.Errorf("Status = bad entries %q, conflicts unknown %q; want %q and the conflicts known", badNames, st.ConflictsUnknown, wantBad)
	}
	if _, err := snap.Files(ctx); !errors.Is(err, ErrBadEntry) {
		t.Errorf("Files = %v, want ErrBadEntry for a name that does not open", err)
	}
	recs, err := v.Log(ctx, LogOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Subject != sealedUnopened || recs[0].Command != "" || recs[0].ToolUseID != "" {
		t.Errorf("record of a message sealed under another key = %+v, want it unbelieved", recs[0])
	}
	// A message in the clear in a sealed tree is no more believed: memvault
	// seals every message there.
	if recs[1].Subject != sealedUnopened || recs[1].Command != "" {
		t.Errorf("record of a plain message in a sealed vault = %+v, want it unbelieved", recs[1])
	}

}

func mustSeal(t *testing.T, k *seal.Key, dir, name string) string {
	t.Helper()
	s, err := k.SealName(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustBlob(t *testing.T, k *seal.Key, plain string, rs []ageRecipient) []byte {
	t.Helper()
	b, err := sealBlob(k, []byte(plain), rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A removed recipient still holds the key a rotation retired. A tree it
// writes with a key file only it opens, and names and a message sealed under
// that retired key, must not be read under it at the head: the clone would
// take the message for a writer's and seal its next writes under a key the
// removed recipient holds.
func TestSealedHeadKeyNotRetired(t *testing.T) {
	ctx := context.Background()
	v, _ := newTestVault(t)
	defer v.Close()
	mustCreate(t, v, "/memories/a.md", "a\n")
	retired, err := v.currentKey()
	if err != nil || retired == nil {
		t.Fatalf("currentKey = %v, %v", retired, err)
	}
	removed, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, Meta{}, RecipientChange{Add: []string{removed.Recipient().String()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, Meta{}, RecipientChange{Remove: []string{removed.Recipient().String()}}); err != nil {
		t.Fatal(err)
	}
	if k, _ := v.currentKey(); sameKey(k, retired) {
		t.Fatal("removing a recipient did not rotate the key")
	}

	only := []ageRecipient{removed.Recipient()}
	keyFile, err := encrypt(retired.Marshal(), only)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := retired.SealMessage(seal.Message{Text: "create /memories/planted.md\n\nMemory-Command: create\nTool-Use-Id: forged\n"})
	if err != nil {
		t.Fatal(err)
	}
	hostileCommit(t, v, msg,
		gitlog.Change{Op: gitlog.Delete, Path: memDir},
		gitlog.Change{Op: gitlog.Put, Path: "memories/" + mustSeal(t, retired, "/memories", "planted.md"), Data: mustBlob(t, retired, "planted\n", only)},
		gitlog.Change{Op: gitlog.Put, Path: keyPath, Data: keyFile})

	if k, err := v.currentKey(); err == nil || sameKey(k, retired) {
		t.Errorf("currentKey = retired %v, err %v; want the head's key file refused", sameKey(k, retired), err)
	}
	recs, err := v.Log(ctx, LogOptions{Limit: 1})
	if err == nil && (recs[0].ToolUseID == "forged" || recs[0].Command == "create") {
		t.Errorf("Log believes the head's message sealed under a retired key: %+v", recs[0])
	}
	if err != nil && !errors.Is(err, ErrDecrypt) {
		t.Errorf("Log = %v, want ErrDecrypt: the head's key file does not open for this identity", err)
	}
}

// Status reads the head's record before anything has opened a key: in a new
// process, a message in the clear at the head of a sealed vault is not taken
// for a writer's there either.
func TestSealedClearHeadMessageNewProcess(t *testing.T) {
	ctx := context.Background()
	v, opts := newTestVault(t)
	hostileCommit(t, v, "create /memories/first.md\n\nMemory-Command: create\nTool-Use-Id: forged\n")
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	st, err := fresh.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Head.Subject != sealedUnopened || st.Head.ToolUseID != "" || st.Head.Command != "" {
		t.Errorf("Status().Head = %+v, want the message in the clear unbelieved", st.Head)
	}
	recs, err := fresh.Log(ctx, LogOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Subject != sealedUnopened || recs[0].ToolUseID != "" || recs[0].Command != "" {
		t.Errorf("Log()[0] = %+v, want the message in the clear unbelieved", recs[0])
	}
}

// newTestVault makes a vault of the default format in a new folder and
// returns it with the options that open it again at v.Dir(); the caller
// closes it.
func newTestVault(tb testing.TB) (*Vault, Options) {
	tb.Helper()
	dir := tb.TempDir()
	opts := Options{IdentityFile: filepath.Join(dir, "id")}
	v, _, err := Init(context.Background(), filepath.Join(dir, "v.git"), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return v, opts
}

// mustCreate writes text at p in a commit of its own and returns the head.
func mustCreate(tb testing.TB, v *Vault, p, text string) string {
	tb.Helper()
	ctx := context.Background()
	if err := v.Update(ctx, Meta{Command: "create"}, func(tx *Tx) error { return tx.WriteFile(ctx, p, []byte(text)) }); err != nil {
		tb.Fatal(err)
	}
	h, err := v.Head()
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
