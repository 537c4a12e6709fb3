package vault_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

func formatName(sealed bool) string {
	if sealed {
		return "sealed"
	}
	return "plain"
}

// hostileNames stores memory paths in a hostile tree as a vault does: as they
// are (key nil), or sealed under key, the way a writer who holds the vault's
// key (one gone bad) can.
type hostileNames struct{ key *seal.Key }

// path maps the tree path p ("memories/x/evil.md") to its stored form.
func (n hostileNames) path(p string) string {
	rest, ok := strings.CutPrefix(p, "memories/")
	if n.key == nil || !ok {
		return p
	}
	s, err := n.key.SealPath(vault.Root, vault.Root+"/"+rest)
	if err != nil {
		panic(err)
	}
	return "memories/" + s
}

// name is the stored form of name in the memory folder dir: sealed when it can
// be (a name sealed by the key then fails on the rules of the path it opens
// to), as it is when it cannot (it then fails on git's own rules).
func (n hostileNames) name(dir, name string) string {
	if n.key == nil {
		return name
	}
	if s, err := n.key.SealName(dir, name); err == nil {
		return s
	}
	return name
}

// vaultKey opens the vault key of the tree at rev in the repository at dir
// with the identity of opts, as any recipient can.
func vaultKey(t *testing.T, dir, rev string, opts vault.Options) *seal.Key {
	t.Helper()
	plain, err := vault.Decrypt(opts, gitBlob(t, dir, rev+":.memvault/key"))
	if err != nil {
		t.Fatalf("open the vault key: %v", err)
	}
	k, err := seal.ParseKey(plain)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// namesOf is how the hostile's clone of a vault stores names.
func namesOf(t *testing.T, h *gittest.Hostile, opts vault.Options, sealed bool) hostileNames {
	t.Helper()
	if !sealed {
		return hostileNames{}
	}
	return hostileNames{vaultKey(t, h.Dir, "main", opts)}
}

// recipientOf is the age recipient of the identity of opts.
func recipientOf(t *testing.T, opts vault.Options) age.Recipient {
	t.Helper()
	id, err := keys.ReadFile(opts.IdentityFile, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := age.ParseX25519Recipient(id.Recipients[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ageFile encrypts plain to r, by age itself.
func ageFile(t *testing.T, plain []byte, r age.Recipient) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := age.Encrypt(&b, r)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(plain)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sealedBlob is a memory blob of the sealed format, its size header sealed
// under k: what the vault writes, made here from seal's parts and age.
func sealedBlob(t *testing.T, k *seal.Key, plain []byte, r age.Recipient) []byte {
	t.Helper()
	ct := ageFile(t, seal.Pad(plain), r)
	hdr, err := age.ExtractHeader(bytes.NewReader(ct))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := k.SealSize(int64(len(plain)), hdr)
	if err != nil {
		t.Fatal(err)
	}
	return append(sh, ct...)
}

// TestSyncRefusesSealedHostile pushes, signed by a writer gone bad, what only
// a sealed vault refuses: names and size headers that do not open under its
// key, a key that does not open, a format and a key that disagree. Each is
// refused by name (a stored name, where the entry has no other), and nothing
// moves; a clone refuses them too.
func TestSyncRefusesSealedHostile(t *testing.T) {
	other, err := seal.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	type env struct {
		h    *gittest.Hostile
		n    hostileNames
		r    age.Recipient
		keep string // the stored path of /memories/x/keep.md
	}
	put := func(e env, p string, blob []byte) string {
		return e.h.Set(e.h.Head()+"^{tree}", p, gittest.TreeEntry{Mode: "100644", Hash: e.h.Blob(blob)})
	}
	for _, tc := range []struct {
		name   string
		change func(e env) string
		reason string
	}{
		{"name in the clear", func(e env) string {
			return put(e, "memories/evil.md", gitBlob(t, e.h.Dir, "main:"+e.keep))
		}, `"memories/evil.md": a name not sealed under this vault's key`},
		{"name under another key", func(e env) string {
			s, _ := other.SealName(vault.Root, "evil.md")
			return put(e, "memories/"+s, gitBlob(t, e.h.Dir, "main:"+e.keep))
		}, "a name not sealed under this vault's key"},
		{"name moved to another folder", func(e env) string {
			return put(e, "memories/"+e.keep[strings.LastIndexByte(e.keep, '/')+1:], gitBlob(t, e.h.Dir, "main:"+e.keep))
		}, "a name not sealed under this vault's key"},
		{"no size header", func(e env) string {
			return put(e, e.n.path("memories/evil.md"), ageFile(t, []byte("evil\n"), e.r))
		}, "no sealed size header"},
		{"size header under another key", func(e env) string {
			return put(e, e.n.path("memories/evil.md"), sealedBlob(t, other, []byte("evil\n"), e.r))
		}, "a size header not sealed under this vault's key"},
		{"key that does not open", func(e env) string {
			return put(e, ".memvault/key", ageFile(t, other.Marshal(), stranger.Recipient()))
		}, "a vault key that does not open for this identity"},
		{"key that is no age file", func(e env) string {
			return put(e, ".memvault/key", other.Marshal())
		}, `".memvault/key": not an age file`},
		{"format 2 with no key", func(e env) string {
			return e.h.Set(e.h.Head()+"^{tree}", ".memvault/key", gittest.TreeEntry{})
		}, "a sealed format with no .memvault/key"},
		{"key in format 1", func(e env) string {
			return put(e, ".memvault/format", []byte("1\n"))
		}, "a vault key in a tree that is not of a sealed format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := gittest.Bare(t, t.TempDir(), "remote")
			a, b, opts := hostilePairIn(t, url, true)
			write(t, a, "/memories/x/keep.md", "kept\n")
			mustSync(t, a)
			h := gittest.NewHostile(t, url)
			h.SigningKey = keys.SigningKeyFile(opts.IdentityFile) // a writer gone bad
			e := env{h: h, n: namesOf(t, h, opts, true), r: recipientOf(t, opts)}
			e.keep = e.n.path("memories/x/keep.md")
			good := h.Head()
			bad := h.Commit(tc.change(e), "hostile\n", good)
			h.Push(bad)
			before := head(t, b)
			_, err := b.Sync(ctx, vault.SyncOptions{Host: "test"})
			if !errors.Is(err, vault.ErrRefused) {
				t.Fatalf("Sync = %v, want ErrRefused", err)
			}
			if !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("Sync error %q does not name commit %s and %q", err, bad, tc.reason)
			}
			if strings.Contains(err.Error(), "evil") && tc.name != "name in the clear" {
				t.Errorf("Sync error %q quotes a plaintext name it cannot know", err)
			}
			if got := head(t, b); got != before {
				t.Errorf("head moved from %s to %s", before, got)
			}
			if _, _, err := vault.Clone(ctx, url, t.TempDir()+"/c.git", opts, vault.CloneOptions{}); !errors.Is(err, vault.ErrRefused) {
				t.Errorf("Clone = %v, want ErrRefused", err)
			}
		})
	}
}

// rotatedTree is the head's tree of the hostile's clone with a new vault key,
// encrypted to r, and /memories/x/keep.md (text) alone under it, sealed anew:
// a whole key change, as anyone who knows the recipients can make one.
func rotatedTree(t *testing.T, h *gittest.Hostile, r age.Recipient, text string) (string, *seal.Key) {
	t.Helper()
	k, err := seal.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	tree := h.Set(h.Head()+"^{tree}", "memories", gittest.TreeEntry{})
	tree = h.Set(tree, ".memvault/key", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(ageFile(t, k.Marshal(), r))})
	tree = h.Set(tree, hostileNames{k}.path("memories/x/keep.md"), gittest.TreeEntry{Mode: "100644", Hash: h.Blob(sealedBlob(t, k, []byte(text), r))})
	return tree, k
}

// What binds a vault key to a writer: the commit that brings it. The host can
// make a key file the recipients open (age files name no sender) and seal
// names under it, but not sign the commit: it is refused with ErrUnsigned.
// The same change signed by a writer is a rotation, taken, and the clone reads
// the names sealed under the new key.
func TestSealedKeyChangeNeedsAWriter(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := hostilePairIn(t, url, true)
	write(t, a, "/memories/x/keep.md", "kept\n")
	mustSync(t, a)
	mustSync(t, b)
	h := gittest.NewHostile(t, url)
	good := h.Head()
	tree, _ := rotatedTree(t, h, recipientOf(t, opts), "the host's\n")
	h.Push(h.Commit(tree, "memvault\n", good))
	if _, err := b.Sync(ctx, vault.SyncOptions{Host: "test"}); !errors.Is(err, vault.ErrUnsigned) {
		t.Fatalf("Sync of a key change the host made = %v, want ErrUnsigned", err)
	}
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile)
	tree, _ = rotatedTree(t, h, recipientOf(t, opts), "the writer's\n")
	h.Git("update-ref", "refs/heads/main", good)
	h.Git("push", "-q", "--force", url, "refs/heads/main:refs/heads/main")
	h.Push(h.Commit(tree, "memvault\n", good))
	if res, err := b.Sync(ctx, vault.SyncOptions{Host: "test"}); err != nil || res.Action != "fast-forward" {
		t.Fatalf("Sync of a writer's key change = %+v, %v; want a fast-forward", res, err)
	}
	if got, err := read(t, b, "/memories/x/keep.md"); err != nil || got != "the writer's\n" {
		t.Errorf("keep.md under the new key = %q, %v", got, err)
	}
}

// A message is believed only when it opens: a writer's commit whose message
// is in the clear, or sealed under another key, is admitted (its tree is
// sound), and the log shows it as unopened, never as the agent's.
func TestSealedMessageBelievedOnlyWhenItOpens(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, b, opts := hostilePairIn(t, url, true)
	write(t, a, "/memories/x/keep.md", "kept\n")
	mustSync(t, a)
	mustSync(t, b)
	h := gittest.NewHostile(t, url)
	h.SigningKey = keys.SigningKeyFile(opts.IdentityFile)
	n, r := namesOf(t, h, opts, true), recipientOf(t, opts)
	other, err := seal.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.SealMessage(seal.Message{Text: "create /memories/x/b.md\n\nMemory-Command: create\nAgent: mallory-sealed\n", AuthorName: "mallory-sealed"})
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range []string{
		"create /memories/x/a.md\n\nMemory-Command: create\nMemory-Path: /memories/x/a.md\nAgent: mallory\n",
		forged,
	} {
		p := []string{"memories/x/a.md", "memories/x/b.md"}[i]
		h.Change(n.path(p), gittest.TreeEntry{Mode: "100644", Hash: h.Blob(sealedBlob(t, n.key, []byte("x\n"), r))}, msg)
	}
	mustSync(t, b)
	recs, err := b.Log(ctx, vault.LogOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Agent != "" || rec.Command != "" || strings.Contains(rec.Subject, "mallory") || strings.Contains(rec.Author, "mallory") ||
			!strings.Contains(rec.Subject, "does not open") {
			t.Errorf("Log record of a message that does not open = %+v, want it unbelieved", rec)
		}
	}
}
