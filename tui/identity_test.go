package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/vault"
)

// After one commit from before a key was added showed "cannot decrypt", the
// status bar went on saying "wrong identity" for the whole session, though
// the current files read fine. The warning describes what is shown: the old
// commit while it is selected, nothing once a readable file is.
//
// The vault is of the plain format: there a key added later reads the current
// files, not the commits before it was added (a sealed vault's key chain opens
// those too).
func TestIdentityWarningFollowsWhatIsShown(t *testing.T) {
	v, opts := newVaultFormat(t, false)
	seed(t, v)
	ctx := context.Background()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{id.Recipient().String()}}); err != nil {
		t.Fatal(err)
	}
	// The new key reads the current files, not the commits before it was added.
	idFile := filepath.Join(t.TempDir(), "new-identity")
	if err := os.WriteFile(idFile, []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.IdentityFile = idFile
	nv, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nv.Close() })
	d := newDriverFor(t, fixedIdentity{nv}, v, 80, 24)
	d.keys("tab", "j", "j", "j") // the str_replace of preferences.md, before the new key
	d.golden("identity_old_commit")
	if got := d.m.statusBar(); !strings.Contains(got, "encrypted to other keys") {
		t.Errorf("on a commit from before the key, the status bar says %q, want it to name the commit", strings.TrimSpace(got))
	}
	d.keys("shift+tab", "G", "l", "j") // user/preferences.md at the head
	if got := d.frame(); !strings.Contains(got, "Tabs, not spaces") {
		t.Fatalf("the current file does not read with the new key:\n%s", got)
	}
	if got := d.m.statusBar(); strings.Contains(got, "identity") || strings.Contains(got, "other keys") {
		t.Errorf("on a file that reads fine the status bar still warns: %q", strings.TrimSpace(got))
	}
}
