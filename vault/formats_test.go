package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestNewerProgressLeftAlone: a re-encryption's progress file of a newer
// memvault is refused, never started over: it may hold that version's work.
func TestNewerProgressLeftAlone(t *testing.T) {
	dir := t.TempDir()
	newer := []byte("memvault reencrypt v2 whatever it records\nand more\n")
	path := filepath.Join(dir, "reencrypt")
	if err := os.WriteFile(path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openProgress(dir, [32]byte{1}); !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("openProgress over a newer file = %v, want ErrNewerFormat", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, newer) {
		t.Fatalf("the newer progress file was rewritten: %q", got)
	}
	// One of this version for another recipient set is started over, as before.
	if err := os.WriteFile(path, []byte(progressMagic+"00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _, err := openProgress(dir, [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	p.close(false)
}
