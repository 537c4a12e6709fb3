package vault

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/vault/keys"
)

// BenchmarkSignVerify is the cryptography alone that signing adds to a write
// (sign) and a sync (verify, per arriving commit), on a commit-sized payload.
func BenchmarkSignVerify(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	payload := bytes.Repeat([]byte("tree 0123456789abcdef0123456789abcdef01234567\n"), 8)
	b.Run("sign", func(b *testing.B) {
		for b.Loop() {
			sig, err := sshsig.Sign(bytes.NewReader(payload), signer, keys.SigHash, keys.SigNamespace)
			if err != nil {
				b.Fatal(err)
			}
			sshsig.Armor(sig)
		}
	})
	sig, _ := sshsig.Sign(bytes.NewReader(payload), signer, keys.SigHash, keys.SigNamespace)
	armored := sshsig.Armor(sig)
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			s, err := sshsig.Unarmor(armored)
			if err != nil {
				b.Fatal(err)
			}
			if err := sshsig.Verify(bytes.NewReader(payload), s, s.PublicKey, s.HashAlgorithm, keys.SigNamespace); err != nil {
				b.Fatal(err)
			}
		}
	})
}
