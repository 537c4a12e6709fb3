package vault

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// TestFsckFindsPlaintext plants a memory blob written without encryption deep in
// the history, as a buggy or malicious writer could, and expects fsck to name it.
func TestFsckFindsPlaintext(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Plain: the blob is planted at a plain name with a plain message;
	// TestFsckSealed plants its like in a sealed vault.
	v, _, err := Init(ctx, dir+"/v.git", Options{IdentityFile: dir + "/id", Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("Fsck on a new vault = %v, %v", problems, err)
	}
	w, _ := v.repo.Lock(ctx)
	head, _ := v.repo.Head()
	_, err = w.Commit(context.Background(), head, []gitlog.Change{{Op: gitlog.Put, Path: "memories/leak.md", Data: []byte("secret in the clear")}},
		gitlog.CommitInfo{Message: "leak\n", Sign: v.sign.sign})

	w.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	err = v.Update(ctx, Meta{Command: "delete"}, func(tx *Tx) error { return tx.Remove("/memories/leak.md") })
	if err != nil {
		t.Fatal(err)
	}
	problems, err := v.Fsck(ctx)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "memories/leak.md") ||
		!strings.Contains(problems[0], "not an age file") || !strings.HasPrefix(problems[0], "commit ") {
		t.Errorf("Fsck with a plaintext blob in history = %q, %v; want one problem naming memories/leak.md", problems, err)
	}
}

// TestFsckSealed damages a sealed vault's history by hand, one way per
// commit, and expects fsck to name each: a name sealed under no key, a size
// header altered, a size header that lies about the padded frame, a message
// in the clear, and a sealed message that does not open.
func TestFsckSealed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _, err := Init(ctx, dir+"/v.git", Options{IdentityFile: dir + "/id"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Update(ctx, Meta{Command: "create"}, func(tx *Tx) error { return tx.WriteFile(ctx, "/memories/a/b.md", []byte("b\n")) }); err != nil {
		t.Fatal(err)
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("Fsck on a sound sealed vault = %q, %v", problems, err)
	}
	k, err := v.currentKey()
	if err != nil || k == nil {
		t.Fatalf("currentKey = %v, %v", k, err)
	}
	snap, _ := v.Snapshot(ctx)
	content, _ := snap.recipientsContent()
	rs, err := v.keys.parseRecipients(content)
	if err != nil {
		t.Fatal(err)
	}
	sealedAt := func(p string) string {
		tp, err := codecOf(k, nil).treePath(p)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	// blob is a sealed memory blob whose size header says size, over the
	// padded frame of plain.
	blob := func(plain []byte, size int64) []byte {
		ct, err := encrypt(seal.Pad(plain), rs)
		if err != nil {
			t.Fatal(err)
		}
		hdr, err := age.ExtractHeader(bytes.NewReader(ct))
		if err != nil {
			t.Fatal(err)
		}
		sh, err := k.SealSize(size, hdr)
		if err != nil {
			t.Fatal(err)
		}
		return append(sh, ct...)
	}
	flipped := blob([]byte("f\n"), 2)
	flipped[20] ^= 1
	b, _, _ := snap.lookup("/memories/a/b.md")
	sealedMsg := func(text string) string {
		m, err := k.SealMessage(seal.Message{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		change gitlog.Change
		msg    string
	}{
		{gitlog.Change{Op: gitlog.Link, Path: "memories/leak.md", Hash: b.Hash}, sealedMsg("link\n")},
		{gitlog.Change{Op: gitlog.Put, Path: sealedAt("/memories/flip.md"), Data: flipped}, sealedMsg("flip\n")},
		{gitlog.Change{Op: gitlog.Put, Path: sealedAt("/memories/lie.md"), Data: blob([]byte("x"), 5000)}, sealedMsg("lie\n")},
		{gitlog.Change{Op: gitlog.Put, Path: sealedAt("/memories/ok.md"), Data: blob([]byte("ok"), 2)}, "create /memories/ok.md\n"},
		{gitlog.Change{Op: gitlog.Put, Path: sealedAt("/memories/ok2.md"), Data: blob([]byte("ok"), 2)}, seal.Subject + "\n\n" + seal.Trailer + ": AAAA\n"},
	} {
		w, _ := v.repo.Lock(ctx)
		head, _ := v.repo.Head()
		_, err = w.Commit(context.Background(), head, []gitlog.Change{c.change}, gitlog.CommitInfo{Message: c.msg, Sign: v.sign.sign})
		w.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	problems, err := v.Fsck(ctx)
	want := []string{
		`"memories/leak.md": a name not sealed under this vault's key`,
		"a size header not sealed under this vault's key",
		"/memories/lie.md: a size header of 5000 bytes over a padded frame of 1088 bytes",
		"a message in the clear in a sealed tree",
		"a message that does not open under its tree's key",
	}
	if err != nil || len(problems) != len(want) {
		t.Fatalf("Fsck of a damaged sealed vault = %q, %v; want %d problems", problems, err, len(want))
	}
	all := strings.Join(problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("Fsck = %q; want a line with %q", problems, w)
		}
	}
	for _, p := range problems {
		if !strings.HasPrefix(p, "commit ") {
			t.Errorf("Fsck line %q does not name its commit", p)
		}
	}
}
