package vault_test

import (
	"os"
	"testing"

	"github.com/memvault/memvault/vault/vaulttest"
)

// TestWrittenIsNotDecrypted: what a process wrote, it reads back
// from memory, never decrypting what it just encrypted. With the identity
// gone, only the plaintext kept at the write can answer the read.
func TestWrittenIsNotDecrypted(t *testing.T) {
	v := vaulttest.New(t)
	write(t, v, "/memories/a.md", "remembered")
	if err := os.Remove(v.IdentityFile()); err != nil {
		t.Fatal(err)
	}
	if got, err := read(t, v, "/memories/a.md"); err != nil || got != "remembered" {
		t.Errorf("read after write without the identity = %q, %v; want %q from memory", got, err, "remembered")
	}
}
