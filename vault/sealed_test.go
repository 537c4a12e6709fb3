package vault_test

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// newSealed creates a vault in the sealed format with its own identity.
func newSealed(t *testing.T) (*vault.Vault, string, vault.Options) {
	t.Helper()
	dir := t.TempDir()
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
	v, res, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil || !res.VaultCreated {
		t.Fatalf("vault.Init(Sealed) = %+v, %v", res, err)
	}
	t.Cleanup(func() { v.Close() })
	return v, filepath.Join(dir, "vault.git"), opts
}

func TestSealedReadWriteList(t *testing.T) {
	v, _, _ := newSealed(t)
	write(t, v, "/memories/clients/acme/notes.md", "hello\n")
	write(t, v, "/memories/clients/acme/big.md", strings.Repeat("x", 5100))
	write(t, v, "/memories/top.md", "")
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadFile(ctx, "/memories/clients/acme/notes.md"); err != nil || string(got) != "hello\n" {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
	for p, want := range map[string]vault.Kind{
		"/memories": vault.KindDir, "/memories/clients": vault.KindDir, "/memories/clients/acme": vault.KindDir,
		"/memories/clients/acme/notes.md": vault.KindFile, "/memories/clients/nope": vault.KindNone,
		"/memories/top.md/x": vault.KindNone,
	} {
		if got, err := s.Stat(p); err != nil || got != want {
			t.Errorf("Stat(%q) = %v, %v; want %v", p, got, err, want)
		}
	}
	es, err := s.List(ctx, "/memories/clients/acme/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if e.Err != nil {
			t.Errorf("List entry %q: %v", e.Name, e.Err)
		}
		got = append(got, e.Name+":"+strconv.FormatInt(e.Size, 10))
	}
	if want := "big.md:5100 notes.md:6"; strings.Join(got, " ") != want {
		t.Errorf("List(acme) = %v, want %s (plaintext names and exact sizes, in byte order)", got, want)
	}
	files, err := s.Files(ctx)
	if err != nil || strings.Join(files, " ") != "/memories/clients/acme/big.md /memories/clients/acme/notes.md /memories/top.md" {
		t.Errorf("Files = %v, %v", files, err)
	}
	// Rename a file, then the folder holding it: every name below is sealed
	// anew, under its new folder.
	mustUpdate(t, v, "rename", func(tx *vault.Tx) error {
		return tx.Rename("/memories/clients/acme/notes.md", "/memories/clients/acme/n2.md")
	})
	mustUpdate(t, v, "rename", func(tx *vault.Tx) error { return tx.Rename("/memories/clients", "/memories/customers") })
	s, _ = v.Snapshot(ctx)
	files, err = s.Files(ctx)
	if err != nil || strings.Join(files, " ") != "/memories/customers/acme/big.md /memories/customers/acme/n2.md /memories/top.md" {
		t.Errorf("Files after renames = %v, %v", files, err)
	}
	if got, err := s.ReadFile(ctx, "/memories/customers/acme/n2.md"); err != nil || string(got) != "hello\n" {
		t.Errorf("ReadFile after renames = %q, %v", got, err)
	}
	mustUpdate(t, v, "delete", func(tx *vault.Tx) error { return tx.Remove("/memories/customers") })
	s, _ = v.Snapshot(ctx)
	if files, _ := s.Files(ctx); strings.Join(files, " ") != "/memories/top.md" {
		t.Errorf("Files after delete = %v", files)
	}
	// A component too long to seal is refused as an invalid path, by name.
	long := "/memories/" + strings.Repeat("n", 200) + ".md"
	err = v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error { return tx.WriteFile(ctx, long, []byte("x")) })
	var pe *vault.PathError
	if !errors.As(err, &pe) || pe.Kind != vault.PathInvalid || !strings.Contains(pe.Reason, "143") {
		t.Errorf("WriteFile(a 203-byte name) = %v, want a PathError naming the 143-byte limit", err)
	}
}

func mustUpdate(t *testing.T, v *vault.Vault, cmd string, fn func(tx *vault.Tx) error) {
	t.Helper()
	if err := v.Update(ctx, vault.Meta{Command: cmd}, fn); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
}

func TestSealedLog(t *testing.T) {
	v, _, _ := newSealed(t)
	meta := vault.Meta{Command: "create", ToolUseID: "toolu_01ABC", Agent: "canary-agent", Session: "canary-session"}
	if err := v.Update(ctx, meta, func(tx *vault.Tx) error { return tx.WriteFile(ctx, "/memories/a/b.md", []byte("1\n")) }); err != nil {
		t.Fatal(err)
	}
	if err := v.Update(ctx, vault.Meta{Command: "rename"}, func(tx *vault.Tx) error { return tx.Rename("/memories/a", "/memories/c") }); err != nil {
		t.Fatal(err)
	}
	write(t, v, "/memories/other.md", "x")
	recs := vaulttest.Log(t, v, vault.LogOptions{})
	if len(recs) != 4 {
		t.Fatalf("Log = %d records, want 4", len(recs))
	}
	r := recs[2]
	if r.Command != "create" || r.Path != "/memories/a/b.md" || r.ToolUseID != "toolu_01ABC" || r.Agent != "canary-agent" ||
		r.Session != "canary-session" || r.Author != "canary-agent" || r.Subject != "create /memories/a/b.md" || r.TreeDisagrees {
		t.Errorf("Log record of the create = %+v, want it opened", r)
	}
	if recs[3].Command != "init" {
		t.Errorf("first record = %+v, want the init opened", recs[3])
	}
	// One file's history follows it back through the folder's rename.
	recs = vaulttest.Log(t, v, vault.LogOptions{Path: "/memories/c/b.md"})
	var cmds []string
	for _, r := range recs {
		cmds = append(cmds, r.Command)
	}
	if strings.Join(cmds, " ") != "rename create" {
		t.Errorf("Log(c/b.md) = %v, want [rename create]", cmds)
	}
}

// What the host of a sealed vault holds: every object of the repository, as
// git reads it, scanned for each name, folder, subject word, tool-use id,
// agent and session the vault was given; and the blob sizes of files of 5,
// 300, 900 bytes (and of 5,000 and 5,100) equal.
func TestSealedHostSeesNothing(t *testing.T) {
	v, dir, _ := newSealed(t)
	sizes := map[string]int{"five": 5, "three-hundred": 300, "nine-hundred": 900, "five-thousand": 5000, "five-thousand-one-hundred": 5100}
	for name, n := range sizes {
		meta := vault.Meta{Command: "create", ToolUseID: "toolu_canary01", Agent: "agent-canary", Session: "session-canary"}
		err := v.Update(ctx, meta, func(tx *vault.Tx) error {
			return tx.WriteFile(ctx, "/memories/folder-canary/"+name+"-canary.md", bytes.Repeat([]byte("z"), n))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Each canary holds a character that neither a sealed name (base32, lower
	// case) nor a sealed trailer (base64) uses, so none can turn up by chance.
	canaries := []string{"folder-canary", "toolu_canary01", "agent-canary", "session-canary",
		"create /memories", "memories/f", "Memory-Path", "Tool-Use-Id"}
	for name := range sizes {
		canaries = append(canaries, name+"-canary")
	}
	for _, canary := range canaries {
		if found := vaulttest.FindInObjects(t, dir, []byte(canary)); len(found) > 0 {
			t.Errorf("the host can read %q in %v", canary, found)
		}
	}
	out, err := exec.Command(gittest.Git(t), "--git-dir", dir, "ls-tree", "-r", "-l", "main", "memories").Output()
	if err != nil {
		t.Fatal(err)
	}
	blobSizes := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		blobSizes[f[3]] = true
	}
	if len(blobSizes) != 2 {
		t.Errorf("blob sizes %v: want two buckets (under 1 KiB, and 5,000 with 5,100)", blobSizes)
	}
}

// textconv in a plain clone needs an identity and the key file (and keychain)
// the clone checks out: a file of format 3 is encrypted to its key's
// generation, which the key file gives whoever it opens for; the size header
// is skipped and the padding stripped.
func TestSealedTextconv(t *testing.T) {
	v, dir, opts := newSealed(t)
	write(t, v, "/memories/a.md", "plaintext\n")
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	show := func(what string) []byte {
		out, err := exec.Command(gittest.Git(t), "--git-dir", dir, "cat-file", "-p", "main:"+what).Output()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	blob, key, chain := show("memories/"+lsName(t, dir)), show(".memvault/key"), show(".memvault/keychain")
	got, err := vault.DecryptSealed(opts, key, chain, blob)
	if err != nil || string(got) != "plaintext\n" {
		t.Errorf("DecryptSealed(sealed blob) = %q, %v", got, err)
	}
	if _, err := vault.Decrypt(opts, blob); !errors.Is(err, vault.ErrDecrypt) {
		t.Errorf("Decrypt of a format 3 blob without its key file = %v, want ErrDecrypt", err)
	}
}

func lsName(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(gittest.Git(t), "--git-dir", dir, "ls-tree", "--name-only", "main", "memories/").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "memories/")
}

// storedNames lists the tree paths under memories/ of main, as the host sees
// them.
func storedNames(t *testing.T, v *vault.Vault, dir string) string {
	t.Helper()
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gittest.Git(t), "--git-dir", dir, "ls-tree", "-r", "--name-only", "main", "memories/").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// Key rotation: adding a recipient keeps the vault key (the key file is
// encrypted to the new set, every size header sealed again for its new age
// file); removing one writes a new key and re-seals every current name and
// size header in the commit that re-encrypts the files. A file's history
// crosses that commit; the files read and list with exact sizes after each.
func TestSealedRotation(t *testing.T) {
	v, dir, _ := newSealed(t)
	write(t, v, "/memories/clients/acme/notes.md", "hello\n")
	write(t, v, "/memories/top.md", strings.Repeat("t", 3000))
	write(t, v, "/memories/clients/acme/notes.md", "hello again\n")
	before := storedNames(t, v, dir)
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		s, err := v.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]string{"/memories/clients/acme/notes.md": "hello again\n", "/memories/top.md": strings.Repeat("t", 3000)} {
			if got, err := s.ReadFile(ctx, p); err != nil || string(got) != want {
				t.Errorf("%s: ReadFile(%s) = %d bytes, %v", when, p, len(got), err)
			}
		}
		es, err := s.List(ctx, "/memories")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Name+":"+strconv.FormatInt(e.Size, 10))
		}
		if strings.Join(got, " ") != "clients:0 top.md:3000" && !strings.Contains(strings.Join(got, " "), "top.md:3000") {
			t.Errorf("%s: List = %v, want top.md of 3000 bytes", when, got)
		}
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{other.Recipient().String()}}); err != nil {
		t.Fatalf("ChangeRecipients(add): %v", err)
	}
	check("after an addition")
	if got := storedNames(t, v, dir); got != before {
		t.Errorf("an addition changed the stored names:\n%s\nwant\n%s", got, before)
	}
	res, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{other.Recipient().String()}})
	if err != nil || res.Files != 2 {
		t.Fatalf("ChangeRecipients(remove) = %+v, %v", res, err)
	}
	check("after a removal")
	after := storedNames(t, v, dir)
	for n := range strings.SplitSeq(before, "\n") {
		if strings.Contains(after, strings.TrimPrefix(n, "memories/")[:20]) {
			t.Errorf("the removal kept the stored name %s", n)
		}
	}
	var cmds []string
	for _, r := range vaulttest.Log(t, v, vault.LogOptions{Path: "/memories/clients/acme/notes.md"}) {
		cmds = append(cmds, r.Command)
	}
	// The addition wrapped the key anew and left the files alone; the
	// removal re-encrypted them under a new generation.
	if strings.Join(cmds, " ") != "recipients-remove create create" {
		t.Errorf("Log(notes.md) = %v, want its history through the rotation", cmds)
	}
	recs := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})
	if recs[0].Command != "recipients-remove" {
		t.Errorf("the rotation's record = %+v, want it opened under the new key", recs[0])
	}
	// Writes after the rotation seal under the new key.
	write(t, v, "/memories/clients/acme/new.md", "new\n")
	s, _ := v.Snapshot(ctx)
	if files, err := s.Files(ctx); err != nil || len(files) != 3 {
		t.Errorf("Files after a write = %v, %v", files, err)
	}
}

// Rekey rotates the vault key with the identity.
func TestSealedRekey(t *testing.T) {
	v, dir, _ := newSealed(t)
	write(t, v, "/memories/a/b.md", "b\n")
	before := storedNames(t, v, dir)
	if _, err := v.Rekey(ctx, vault.Meta{}, vault.RekeyOptions{}); err != nil {
		t.Fatalf("Rekey: %v", err)
	}
	if storedNames(t, v, dir) == before {
		t.Errorf("Rekey kept the stored names")
	}
	if got, err := read(t, v, "/memories/a/b.md"); err != nil || got != "b\n" {
		t.Errorf("read after Rekey = %q, %v", got, err)
	}
}

// Import and ImportHistory into a sealed vault: files land at sealed names
// with size headers, a re-run changes nothing, a name too long to seal is
// skipped, and each replayed commit's message is sealed; a second replay
// passes over the commits the first brought in, read from the opened
// messages.
func TestSealedImport(t *testing.T) {
	v, dir, _ := newSealed(t)
	files := []vault.ImportFile{
		{Path: "/memories/imported/a.md", Data: []byte("a\n")},
		{Path: "/memories/imported/b.md", Data: []byte(strings.Repeat("b", 2000))},
		{Path: "/memories/" + strings.Repeat("n", 200) + ".md", Data: []byte("long\n")},
	}
	res, err := v.Import(ctx, files, vault.ImportOptions{})
	if err != nil || len(res.Added) != 2 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, "143") {
		t.Fatalf("Import = %+v, %v; want 2 added and the long name skipped", res, err)
	}
	if res, err := v.Import(ctx, files[:2], vault.ImportOptions{}); err != nil || res.Changed() || res.Unchanged != 2 {
		t.Errorf("Import again = %+v, %v; want nothing changed", res, err)
	}
	s, _ := v.Snapshot(ctx)
	es, err := s.List(ctx, "/memories/imported")
	if err != nil || len(es) != 2 || es[1].Size != 2000 || es[1].Err != nil {
		t.Errorf("List(imported) = %+v, %v", es, err)
	}

	src := gittest.Bare(t, t.TempDir(), "source")
	h := gittest.Damage(t, src)
	one := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "canary-note.md", Hash: h.Blob([]byte("one\n"))}}), "one\n")
	two := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "canary-note.md", Hash: h.Blob([]byte("two\n"))}}), "two\n", one)
	h.Push(two)
	hist, err := v.ImportHistory(ctx, src, vault.HistoryOptions{To: "/memories/claude"})
	if err != nil || hist.Replayed != 2 {
		t.Fatalf("ImportHistory = %+v, %v; want 2 commits replayed", hist, err)
	}
	if got, err := read(t, v, "/memories/claude/canary-note.md"); err != nil || got != "two\n" {
		t.Errorf("the replayed file = %q, %v", got, err)
	}
	recs := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})
	if recs[0].Command != "import" || !strings.HasPrefix(recs[0].Subject, "import /memories/claude/canary-note.md") {
		t.Errorf("the last import's record = %+v, want it opened", recs[0])
	}
	// Even with Overwrite, a commit brought in before is passed over: an
	// edit made since stays.
	write(t, v, "/memories/claude/canary-note.md", "edited\n")
	if hist, err := v.ImportHistory(ctx, src, vault.HistoryOptions{To: "/memories/claude", Overwrite: true}); err != nil || hist.Replayed != 0 {
		t.Errorf("ImportHistory again = %+v, %v; want nothing replayed", hist, err)
	}
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, needle := range []string{"canary", "imported", "Import-Commit", "Imported-Files"} {
		if found := vaulttest.FindInObjects(t, dir, []byte(needle)); len(found) > 0 {
			t.Errorf("the vault's objects hold %q in %v", needle, found)
		}
	}
}
