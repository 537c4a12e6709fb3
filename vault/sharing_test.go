package vault_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/internal/keyhook"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// openAs opens the vault at dir with another identity file.
func openAs(t *testing.T, dir, identity string) *vault.Vault {
	t.Helper()
	v, err := vault.Open(ctx, dir, vault.Options{IdentityFile: identity})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func newIdentity(t *testing.T, opts keys.IdentityOptions) (path, recipient string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "identity")
	info, err := keys.CreateIdentity(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return path, info.Recipients[0].Key
}

// readAt reads p at commit. In a sealed vault an identity that cannot open
// the commit's vault key fails at the snapshot, before any file: that error
// is returned as the read's.
func readAt(t *testing.T, v *vault.Vault, commit, p string) (string, error) {
	t.Helper()
	s, err := vault.SnapshotAtForTest(v, commit)
	if err != nil {
		return "", err
	}
	b, err := s.ReadFile(ctx, p)
	return string(b), err
}

// Two identities share a vault; the one removed can no longer read
// what is written after, and still reads the history it could read then.
// (The plain format, which re-encrypts every file to add a reader; a sealed
// vault wraps its key anew: TestSealedAddReencryptsNothing.)
func TestTwoIdentitiesShareAVault(t *testing.T) {
	alice, _ := vaulttest.NewPlainAt(t, t.TempDir())
	for i := range 5 {
		write(t, alice, fmt.Sprintf("/memories/n%d.md", i), fmt.Sprintf("note %d", i))
	}
	bobID, bob := newIdentity(t, keys.IdentityOptions{})
	var calls []int
	res, err := alice.ChangeRecipients(ctx, vault.Meta{Agent: "test"}, vault.RecipientChange{
		Add: []string{bob}, Comment: "bob's laptop",
		Progress: func(done, total int) { calls = append(calls, done, total) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 5 || len(res.Added) != 1 || res.Added[0].Key != bob || res.Commit == "" {
		t.Errorf("ChangeRecipients(add bob) = %+v, want 5 files and bob added", res)
	}
	if n := len(calls); n < 2 || calls[n-2] != 5 || calls[n-1] != 5 {
		t.Errorf("progress calls = %v, want to end with 5 of 5", calls)
	}
	bobV := openAs(t, alice.Dir(), bobID)
	for i := range 5 {
		if got, err := read(t, bobV, fmt.Sprintf("/memories/n%d.md", i)); err != nil || got != fmt.Sprintf("note %d", i) {
			t.Errorf("bob reads n%d = %q, %v", i, got, err)
		}
	}
	log := vaulttest.Log(t, alice, vault.LogOptions{Limit: 1})
	if log[0].Command != "recipients-add" || !strings.Contains(log[0].Subject, bob[:20]) {
		t.Errorf("commit = %+v, want a recipients-add naming bob", log[0])
	}
	shared := log[0].Commit
	s, _ := alice.Snapshot(ctx)
	rs, _ := s.Recipients(ctx)
	if len(rs) != 2 || rs[1].Comment != "bob's laptop" {
		t.Errorf("Recipients = %+v, want alice then bob with his comment", rs)
	}

	if _, err := bobV.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{bob}}); !errors.Is(err, vault.ErrRecipients) {
		t.Errorf("bob removing himself: err = %v, want ErrRecipients (he would lock himself out)", err)
	}
	if _, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	write(t, alice, "/memories/after.md", "bob must not read this")
	bobV2 := openAs(t, alice.Dir(), bobID)
	for _, p := range []string{"/memories/after.md", "/memories/n0.md"} {
		_, err := read(t, bobV2, p)
		if !errors.Is(err, vault.ErrDecrypt) || !strings.Contains(err.Error(), bobID) || !strings.Contains(err.Error(), bob) {
			t.Errorf("bob reads %s after removal: err = %v, want ErrDecrypt naming his identity and key", p, err)
		}
	}
	if got, err := readAt(t, bobV2, shared, "/memories/n3.md"); err != nil || got != "note 3" {
		t.Errorf("bob reads n3 at the commit that shared it = %q, %v; want his old access kept", got, err)
	}
}

// gitFileBlobs is, as git ls-tree reads the vault's main branch, the blob of
// each memory file, by its path in the tree.
func gitFileBlobs(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	if err := v.Flush(context.Background()); err != nil { // for git to see its objects
		t.Fatal(err)
	}
	out, err := exec.Command("git", "--git-dir", v.Dir(), "ls-tree", "-r", "main", "memories/").Output()
	if err != nil {
		t.Fatalf("git ls-tree: %v", err)
	}
	blobs := map[string]string{}
	for line := range strings.Lines(string(out)) {
		meta, path, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if f := strings.Fields(meta); len(f) == 3 && f[1] == "blob" {
			blobs[path] = f[2]
		}
	}
	return blobs
}

// gitBlob is the content of blob h, as git cat-file reads it.
func gitBlob(t *testing.T, dir, h string) []byte {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "cat-file", "blob", h).Output()
	if err != nil {
		t.Fatalf("git cat-file blob %s: %v", h, err)
	}
	return out
}

// A re-encryption interrupted after some files is resumed, and the
// re-run re-encrypts only the files left. (A plain vault's addition of a
// reader; a sealed vault's rotation resumes the same way, with its pending
// generation: TestInterruptedRotationResumes.)
func TestInterruptedReencryptionResumes(t *testing.T) {
	v, _ := vaulttest.NewPlainAt(t, t.TempDir())
	const n = 40
	err := v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
		for i := range n {
			if err := tx.WriteFile(ctx, fmt.Sprintf("/memories/d%d/f%d", i%3, i), []byte(fmt.Sprintf("secret plaintext %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := mustLog(t, v)
	original := gitFileBlobs(t, v)
	_, bob := newIdentity(t, keys.IdentityOptions{})
	vaulttest.FailReencryptionAfter(15)
	_, err = v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{bob}})
	vaulttest.FailReencryptionAfter(0)
	if !errors.Is(err, keyhook.ErrInjected) || !strings.Contains(err.Error(), "15 of 40") {
		t.Fatalf("interrupted ChangeRecipients err = %v, want the injected failure after 15 of 40", err)
	}
	if after := mustLog(t, v); len(after) != len(before) {
		t.Errorf("an interrupted re-encryption committed something")
	}
	if found := vaulttest.FindInFiles(t, v.Dir(), []byte("secret plaintext")); len(found) > 0 {
		t.Errorf("plaintext on disk after an interruption: %v", found)
	}
	// The ciphertexts the interrupted run made, as they lie in its progress file.
	progress, err := os.ReadFile(filepath.Join(v.Dir(), "memvault", "reencrypt"))
	if err != nil {
		t.Fatalf("the interrupted run left no progress file: %v", err)
	}
	res, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{bob}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != n || res.Resumed != 15 {
		t.Errorf("resumed ChangeRecipients = %d files, %d resumed; want %d, 15", res.Files, res.Resumed, n)
	}
	// What git holds, not what memvault counts: every file has a new ciphertext
	// (age's are random, so no two encryptions give the same one), and 15 of
	// them are, byte for byte, ciphertexts the interrupted run made: the
	// resumed run took those as they were and encrypted only the other 25. A
	// sealed blob is its size header, then the age file the progress holds.
	final := gitFileBlobs(t, v)
	kept := 0
	for p, blob := range final {
		if blob == original[p] {
			t.Errorf("%s keeps its ciphertext %s from before the change", p, blob)
		}
		data := gitBlob(t, v.Dir(), blob)
		i := bytes.Index(data, []byte("age-encryption.org/v1\n"))
		if i < 0 {
			t.Fatalf("%s: blob %s holds no age file", p, blob)
		}
		if bytes.Contains(progress, data[i:]) {
			kept++
		}
	}
	if len(final) != n || kept != 15 {
		t.Errorf("after the resumed run, git's tree holds %d files, %d of them with a ciphertext the interrupted run made; want %d, 15", len(final), kept, n)
	}
	if _, err := os.Stat(filepath.Join(v.Dir(), "memvault", "reencrypt")); !os.IsNotExist(err) {
		t.Errorf("the progress file outlives the commit: %v", err)
	}
	if after := mustLog(t, v); len(after) != len(before)+1 {
		t.Errorf("re-encryption made %d commits, want one", len(after)-len(before))
	}
}

// A write that lands while files are being re-encrypted (the writer lock is
// not held then) is re-encrypted too before the commit.
func TestWriteDuringReencryption(t *testing.T) {
	dir := t.TempDir()
	v, _ := vaulttest.NewPlainAt(t, dir)
	for i := range 10 {
		write(t, v, fmt.Sprintf("/memories/f%d", i), "x")
	}
	bobID, bob := newIdentity(t, keys.IdentityOptions{})
	wrote := false
	_, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{
		Add: []string{bob},
		Progress: func(done, total int) {
			if done == 5 && !wrote {
				wrote = true
				write(t, v, "/memories/late.md", "written meanwhile")
			}
		},
	})
	if err != nil || !wrote {
		t.Fatalf("ChangeRecipients = %v (wrote %v)", err, wrote)
	}
	if got, err := read(t, openAs(t, v.Dir(), bobID), "/memories/late.md"); err != nil || got != "written meanwhile" {
		t.Errorf("bob reads the late file = %q, %v", got, err)
	}
}

// A clone that wrote before it heard of a removal does not pass its commit
// on: the remote removed bob; clone c, not yet synced, wrote a file (to
// alice and bob, as it knew them) and then syncs with --accept-recipients.
// No commit the remote holds afterwards has a file bob can read that was
// written after the removal.
func TestRemovedRecipientReadsNothingNew(t *testing.T) {
	url := gittest.Bare(t, t.TempDir(), "remote")
	a, c, _ := hostilePair(t, url)
	bobID := filepath.Join(t.TempDir(), "bob")
	bob, err := keys.CreateIdentity(bobID, keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{bob.Recipients[0].Key}}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	mustSyncAccepting(t, c)
	if _, err := a.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{bob.Recipients[0].Key}}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	write(t, c, "/memories/after.md", "written after bob was removed\n")
	mustSyncAccepting(t, c)
	if got, err := read(t, c, "/memories/after.md"); err != nil || got != "written after bob was removed\n" {
		t.Fatalf("c's own write after the sync = %q, %v", got, err)
	}
	// Every version of after.md the remote holds, in any commit.
	h := gittest.NewHostile(t, url)
	ids, err := age.ParseIdentities(strings.NewReader(mustRead(t, bobID)))
	if err != nil {
		t.Fatal(err)
	}
	for _, commit := range strings.Fields(h.Git("rev-list", "refs/heads/main")) {
		blob, err := exec.Command(gittest.Git(t), "--git-dir", h.Dir, "rev-parse", "--verify", "-q", commit+":memories/after.md").Output()
		if err != nil {
			continue
		}
		ct, err := exec.Command(gittest.Git(t), "--git-dir", h.Dir, "cat-file", "blob", strings.TrimSpace(string(blob))).Output()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := age.Decrypt(bytes.NewReader(ct), ids...); err == nil {
			t.Errorf("bob, removed, reads after.md in the remote's commit %s", commit)
		}
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSealedAddReencryptsNothing: a sealed vault (format 3) adds a reader by
// wrapping its key anew: no file is encrypted again, and the reader reads
// every file, through the generation the key file gives.
func TestSealedAddReencryptsNothing(t *testing.T) {
	alice, _ := vaulttest.NewSealedAt(t, t.TempDir())
	for i := range 5 {
		write(t, alice, fmt.Sprintf("/memories/n%d.md", i), fmt.Sprintf("note %d", i))
	}
	bobID, bob := newIdentity(t, keys.IdentityOptions{})
	res, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{bob}})
	if err != nil || res.Files != 0 || len(res.Added) != 1 || res.Commit == "" {
		t.Fatalf("ChangeRecipients(add bob) = %+v, %v; want bob added, no file re-encrypted", res, err)
	}
	bobV := openAs(t, alice.Dir(), bobID)
	for i := range 5 {
		if got, err := read(t, bobV, fmt.Sprintf("/memories/n%d.md", i)); err != nil || got != fmt.Sprintf("note %d", i) {
			t.Errorf("bob reads n%d.md = %q, %v", i, got, err)
		}
	}
}

// TestInterruptedRotationResumes: a sealed vault's removal of a reader, which
// encrypts every file to a new generation, stopped after some files, goes on
// from there when run again, with the same generation.
func TestInterruptedRotationResumes(t *testing.T) {
	v, _ := vaulttest.NewSealedAt(t, t.TempDir())
	_, bob := newIdentity(t, keys.IdentityOptions{})
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{bob}}); err != nil {
		t.Fatal(err)
	}
	const n = 30
	err := v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
		for i := range n {
			if err := tx.WriteFile(ctx, fmt.Sprintf("/memories/f%d", i), []byte(fmt.Sprintf("note %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	vaulttest.FailReencryptionAfter(10)
	_, err = v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{bob}})
	vaulttest.FailReencryptionAfter(0)
	if !errors.Is(err, keyhook.ErrInjected) {
		t.Fatalf("interrupted removal = %v, want the injected failure", err)
	}
	res, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{bob}})
	if err != nil || res.Files != n || res.Resumed < 10 {
		t.Fatalf("resumed removal = %+v, %v; want %d files, at least 10 done before", res, err, n)
	}
	for i := range n {
		if got, err := read(t, v, fmt.Sprintf("/memories/f%d", i)); err != nil || got != fmt.Sprintf("note %d", i) {
			t.Errorf("after the resumed rotation f%d = %q, %v", i, got, err)
		}
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("Fsck = %q, %v", problems, err)
	}
}
