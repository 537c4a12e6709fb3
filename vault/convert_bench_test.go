package vault_test

import (
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkSeal converts a plain vault of 2,000 files (1 KB each) to the
// sealed format, beside the re-encryption the same vault takes for a recipient
// added: the conversion is that re-encryption with padding and sealed names,
// and should cost about the same.
func BenchmarkSeal(b *testing.B) {
	const files = 2000
	for _, op := range []string{"seal", "recipients-add"} {
		b.Run(op, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				v, _ := newPlainAt(b, b.TempDir())
				vaulttest.Seed(b, v, files, 1)
				extra, err := age.GenerateX25519Identity()
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if op == "seal" {
					_, err = v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
				} else {
					_, err = v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{extra.Recipient().String()}})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
