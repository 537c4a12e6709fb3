package vault_test

import (
	"bytes"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestStatusPastAnUnreadableFile: a file this identity cannot read (sealed to
// other recipients) left the conflicts unknown, rightly, and also stopped
// status there, so a damaged file after it was never named. Status goes on
// past it: the damaged file is named, the conflicts stay unknown.
func TestStatusPastAnUnreadableFile(t *testing.T) {
	v := vaulttest.NewFormat(t, false)
	write(t, v, "/memories/keep.md", "kept\n")
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	var ct bytes.Buffer
	w, err := age.Encrypt(&ct, other.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("for someone else\n"))
	w.Close()
	if err := v.Close(); err != nil { // what it wrote reaches git's refs
		t.Fatal(err)
	}
	h := gittest.Damage(t, v.Dir())
	h.Change("memories/a-other.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob(ct.Bytes())}, "by hand\n")
	h.Change("memories/z-bad.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))}, "by hand\n")
	v2, err := vault.Open(ctx, v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	st, err := v2.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.BadEntries) != 1 || st.BadEntries[0].Path != "/memories/z-bad.md" {
		t.Errorf("Status().BadEntries = %+v, want /memories/z-bad.md", st.BadEntries)
	}
	if st.ConflictsUnknown == "" {
		t.Errorf("Status().ConflictsUnknown empty, want unknown: a file does not read with this identity")
	}
}
