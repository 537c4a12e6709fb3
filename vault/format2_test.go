package vault_test

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// unpackFormat2 unpacks into dir the sealed vault of format 2 that the
// memvault before key generations made (testdata/format2-vault.tar.gz): three
// notes, an edit, carol added as a recipient, a file she could read, carol
// removed (a rotation), a file after; the identities of its owner (identity)
// and of carol.
func unpackFormat2(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "format2-vault.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o700)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, 0o600)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestFormat2VaultBecomesFormat3: a sealed vault that an earlier memvault made
// (format 2, no keychain, one rotation in its history) reads as it did; the
// first change of its members makes it format 3 in one commit, whose keychain
// names every key file of the history; a member added then clones it and
// reads every name and message of the history and every current file; carol,
// removed before, reads nothing of it.
func TestFormat2VaultBecomesFormat3(t *testing.T) {
	dir := t.TempDir()
	unpackFormat2(t, dir)
	git := gittest.Git(t)
	var err error
	var alice *vault.Vault
	format := func() string {
		if alice != nil {
			if err := alice.Flush(ctx); err != nil { // git reads the ref the journal flushes
				t.Fatal(err)
			}
		}
		out, err := exec.Command(git, "--git-dir", filepath.Join(dir, "vault.git"), "cat-file", "blob", "main:.memvault/format").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if f := format(); f != "2" {
		t.Fatalf("the fixture is of format %s, want 2", f)
	}
	alice, err = vault.Open(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	want := map[string]string{
		"/memories/notes/n1.md":    "note 1 second\n",
		"/memories/notes/n2.md":    "note 2 first\n",
		"/memories/notes/n3.md":    "note 3 first\n",
		"/memories/while-carol.md": "carol could read this\n",
		"/memories/after-carol.md": "carol cannot read this\n",
	}
	for p, w := range want {
		if got, err := read(t, alice, p); err != nil || got != w {
			t.Fatalf("the format 2 vault reads %s = %q, %v; want %q", p, got, err, w)
		}
	}

	bobID := filepath.Join(dir, "bob")
	info, err := keys.CreateIdentity(bobID, keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{info.Recipients[0].Key}, Comment: "bob"}); err != nil {
		t.Fatalf("add bob to the format 2 vault: %v", err)
	}
	if f := format(); f != "3" {
		t.Errorf("after the change of members the vault is of format %s, want 3", f)
	}
	if problems, err := alice.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("fsck after the upgrade = %q, %v", problems, err)
	}
	url := gittest.Bare(t, dir, "remote")
	if err := alice.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice"}); err != nil {
		t.Fatalf("alice's sync: %v", err)
	}

	bob, _, err := vault.Clone(ctx, url, filepath.Join(dir, "bob.git"), vault.Options{IdentityFile: bobID}, vault.CloneOptions{})
	if err != nil {
		t.Fatalf("bob's clone of the upgraded vault: %v", err)
	}
	defer bob.Close()
	for p, w := range want {
		if got, err := read(t, bob, p); err != nil || got != w {
			t.Errorf("bob reads %s = %q, %v; want %q", p, got, err, w)
		}
	}
	recs, err := bob.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, r := range recs {
		cmds = append(cmds, r.Command+" "+r.Path)
	}
	if got := strings.Join(cmds, ", "); got != "recipients-add , create /memories/after-carol.md, recipients-remove , create /memories/while-carol.md, recipients-add , "+
		"str_replace /memories/notes/n1.md, create /memories/notes/n3.md, create /memories/notes/n2.md, create /memories/notes/n1.md, init " {
		t.Errorf("bob's log opens %q, want every message of the history", got)
	}
	// Contents from before format 3 were encrypted to the members of their
	// time alone: bob reads their names, not them.
	old, err := bob.SnapshotAt(ctx, recs[len(recs)-2].Commit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ReadFile(ctx, "/memories/notes/n1.md"); !errors.Is(err, vault.ErrDecrypt) {
		t.Errorf("bob reads a format 2 content from before he was added: %v, want ErrDecrypt", err)
	}
	if problems, err := bob.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("bob's fsck = %q, %v", problems, err)
	}

	// Carol was removed before: she is no recipient, and clones nothing.
	if _, _, err := vault.Clone(ctx, url, filepath.Join(dir, "carol.git"), vault.Options{IdentityFile: filepath.Join(dir, "carol")}, vault.CloneOptions{}); !errors.Is(err, vault.ErrNotRecipient) {
		t.Errorf("carol's clone = %v, want ErrNotRecipient", err)
	}
}

// TestSealUpgradesFormat2: memvault seal on a vault of format 2 makes it
// format 3 in one commit, with the same members: every file reads as before,
// the history's names and messages still open, and the keychain names every
// older key file, so a member added afterwards reads them too.
func TestSealUpgradesFormat2(t *testing.T) {
	dir := t.TempDir()
	unpackFormat2(t, dir)
	v, err := vault.Open(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	before := len(mustLog(t, v))
	res, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
	if err != nil {
		t.Fatalf("Seal of a format 2 vault: %v", err)
	}
	if res.Files != 5 || res.Commit == "" {
		t.Errorf("Seal = %+v, want 5 files in one commit", res)
	}
	recs := mustLog(t, v)
	if len(recs) != before+1 || recs[0].Command != "seal" {
		t.Errorf("Seal made %d commits (the last %q), want one seal", len(recs)-before, recs[0].Command)
	}
	if got, err := read(t, v, "/memories/notes/n1.md"); err != nil || got != "note 1 second\n" {
		t.Errorf("after Seal, n1.md = %q, %v", got, err)
	}
	if _, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{}); !errors.Is(err, vault.ErrSealed) {
		t.Errorf("a second Seal = %v, want ErrSealed", err)
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("fsck after Seal = %q, %v", problems, err)
	}
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gittest.Git(t), "--git-dir", filepath.Join(dir, "vault.git"), "cat-file", "blob", "main:.memvault/format").Output()
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Errorf(".memvault/format after Seal = %q, %v; want 3", out, err)
	}
}
