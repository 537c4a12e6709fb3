package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestRecipientsNoticeLists: a remote's recipients file with a comment that
// would move the cursor up, erase the line and claim nothing changed. The
// notice lists the key the remote added and the key it removed, from the
// parsed files, and shows the comment escaped.
func TestRecipientsNoticeLists(t *testing.T) {
	v := newVictim(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	mallory := id.Recipient().String()
	h := v.collaborator(t, v.url)
	head := h.Head()
	id2, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	mallory2 := id2.Recipient().String()
	recipients := "# \x1b[1A\x1b[2K(recipients unchanged)\n" + mallory + "\n# \x1b[1A\x1b[2K\u202e\n" + mallory2 + "\n"
	tree := h.Set(head+"^{tree}", ".memvault/recipients", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte(recipients))})
	h.Push(h.Commit(tree, "recipients-change\n", head))

	out, code, stderr := v.cli("", "sync")
	if code != exitSetup || !strings.Contains(stderr, "--accept-recipients") {
		t.Fatalf("sync = status %d, stderr %q; want status %d naming --accept-recipients", code, stderr, exitSetup)
	}
	checkNoRaw(t, "the recipients notice", out)
	checkNoRaw(t, "sync's error", stderr)
	want := "The remote changed the vault's recipients (not taken):\n" +
		"  added    " + mallory + "  (x25519)\n" +
		"  added    " + mallory2 + `  (x25519)  # "\x1b[1A\x1b[2K\u202e"` + "\n" +
		"  removed  " + v.recipient + "  (x25519)\n"
	if out != want {
		t.Errorf("sync printed\n%s\nwant\n%s", out, want)
	}
}

// TestCloneShowsRecipients: a collaborator gone bad (or a host with a
// writer's key) appends its own key to the recipients file. A new clone has
// nothing to compare with; it took the key without a word, and the host read
// everything written there. Now it shows every recipient and clones only
// when each key that is not the identity's own is named or accepted.
func TestCloneShowsRecipients(t *testing.T) {
	v := newVictim(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	mallory := id.Recipient().String()
	h := v.collaborator(t, v.url)
	head := h.Head()
	recipients := h.Git("cat-file", "blob", head+":.memvault/recipients") + "\n" + mallory + "\n"
	tree := h.Set(head+"^{tree}", ".memvault/recipients", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte(recipients))})
	h.Push(h.Commit(tree, "recipients-add\n", head))

	dir := filepath.Join(t.TempDir(), "c.git")
	out, code, stderr := v.cli("", "clone", v.url, dir)
	if code != exitSetup || !strings.Contains(stderr, "--expect-recipient") {
		t.Fatalf("clone = status %d, stderr %q; want status %d naming --expect-recipient", code, stderr, exitSetup)
	}
	if !strings.Contains(out, mallory+"  (x25519)  (NOT EXPECTED)") || !strings.Contains(out, v.recipient+"  (x25519)  (you)") {
		t.Errorf("clone printed\n%s\nwant both recipients, the host's marked NOT EXPECTED", out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused clone left %s: %v", dir, err)
	}
	out, code, stderr = v.cli("", "clone", "--expect-recipient", mallory, v.url, dir)
	if code != exitOK || !strings.Contains(out, mallory+"  (x25519)  (expected)") {
		t.Fatalf("clone --expect-recipient = status %d\n%s%s", code, out, stderr)
	}
	dir2 := filepath.Join(t.TempDir(), "d.git")
	if _, code, stderr = v.cli("", "clone", "--accept-recipients", v.url, dir2); code != exitOK {
		t.Fatalf("clone --accept-recipients = status %d: %s", code, stderr)
	}
}
