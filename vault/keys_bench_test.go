package vault_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/agessh"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkReencrypt measures a change of recipients over a vault of 1 KB
// files: every file decrypted and encrypted again on every core, then one
// commit. Iterations alternate adding and removing a second X25519 key. The
// design's target: 10,000 files in at most 10 s on 2 cores.
func BenchmarkReencrypt(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			ctx := context.Background()
			v := vaulttest.New(b)
			err := v.Update(ctx, vault.Meta{Command: "import"}, func(tx *vault.Tx) error {
				for i := range n {
					if err := tx.WriteFile(ctx, fmt.Sprintf("/memories/d%03d/f%04d.md", i/100, i), oneKB(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			k, _ := age.GenerateX25519Identity()
			other := k.Recipient().String()
			add := true
			for b.Loop() {
				ch := vault.RecipientChange{Remove: []string{other}}
				if add {
					ch = vault.RecipientChange{Add: []string{other}}
				}
				res, err := v.ChangeRecipients(ctx, vault.Meta{}, ch)
				if err != nil || res.Files != n {
					b.Fatalf("ChangeRecipients = %d files, %v", res.Files, err)
				}
				add = !add
			}
		})
	}
}

// BenchmarkRecipientKind measures what one 1 KB memory file costs to encrypt
// to, and to decrypt with, each kind of key.
func BenchmarkRecipientKind(b *testing.B) {
	plain := oneKB(1)
	for _, kind := range []string{"x25519", "mlkem768x25519", "ssh-ed25519", "ssh-rsa"} {
		r, id := benchKey(b, kind)
		b.Run("encrypt/"+kind, func(b *testing.B) {
			for b.Loop() {
				benchEncrypt(b, plain, r)
			}
		})
		ct := benchEncrypt(b, plain, r)
		b.Run("decrypt/"+kind, func(b *testing.B) {
			for b.Loop() {
				rd, err := age.Decrypt(bytes.NewReader(ct), id)
				if err == nil {
					_, err = io.Copy(io.Discard, rd)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchKey(b *testing.B, kind string) (age.Recipient, age.Identity) {
	switch kind {
	case "x25519":
		k, _ := age.GenerateX25519Identity()
		return k.Recipient(), k
	case "mlkem768x25519":
		k, _ := age.GenerateHybridIdentity()
		return k.Recipient(), k
	}
	path, pub := vaulttest.SSHKey(b, b.TempDir(), "id", strings.TrimPrefix(kind, "ssh-"), "")
	r, err := agessh.ParseRecipient(pub)
	if err != nil {
		b.Fatal(err)
	}
	pem, _ := os.ReadFile(filepath.Clean(path))
	id, err := agessh.ParseIdentity(pem)
	if err != nil {
		b.Fatal(err)
	}
	return r, id
}

func benchEncrypt(b *testing.B, plain []byte, r age.Recipient) []byte {
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, r)
	if err == nil {
		_, err = w.Write(plain)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// oneKB is about 1 KB of text, different for each i.
func oneKB(i int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("memory line %d about the user's project.\n", i), 24))
}
