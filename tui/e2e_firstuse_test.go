package tui

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEndToEndFirstUse opens the UI on a vault and an identity that do not
// exist yet: it creates both, as init would, and shows the new vault.
func TestEndToEndFirstUse(t *testing.T) {
	bin := memvaultBinary(t)
	dir := t.TempDir()
	vaultDir, identity := filepath.Join(dir, "new.git"), filepath.Join(dir, "identity")
	x := startTmux(t, bin, "--vault", vaultDir, "--identity", identity, "ui")
	x.waitFor("History · all")
	x.waitFor("init")
	x.keys("q")
	x.waitExit()
	for _, p := range []string{filepath.Join(vaultDir, "HEAD"), identity} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("after the UI's first use: %v", err)
		}
	}
}
