package main

import (
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
