package vaulttest

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/vault/internal/keyhook"
)

// FastScrypt makes the identity files that vault protects with a passphrase
// from now on cheap to unlock (scrypt work factor 2^10 instead of 2^18), for
// the rest of the process. Tests call it, and so does the test binary when it
// runs as the memvault command in a testscript.
func FastScrypt() { keyhook.WorkFactor.Store(10) }

// ScryptRuns returns how many scrypt derivations vault has run in this process
// to unlock identity files.
func ScryptRuns() int64 { return keyhook.ScryptRuns.Load() }

// FailReencryptionAfter makes every re-encryption fail as if interrupted once
// n files are done; 0 turns that off.
func FailReencryptionAfter(n int64) { keyhook.FailAfter.Store(n) }

// SSHKey writes a new SSH private key of type "ed25519" or "rsa" (3072 bits)
// to dir/name in OpenSSH format, encrypted when passphrase is not empty, and
// its public key to dir/name.pub, as ssh-keygen does. It returns the private
// key's path and the public key line.
func SSHKey(tb testing.TB, dir, name, typ, passphrase string) (path, pub string) {
	tb.Helper()
	var key any
	var pk ssh.PublicKey
	var err error
	switch typ {
	case "ed25519":
		var pubKey ed25519.PublicKey
		var priv ed25519.PrivateKey
		if pubKey, priv, err = ed25519.GenerateKey(rand.Reader); err == nil {
			key = priv
			pk, err = ssh.NewPublicKey(pubKey)
		}
	case "rsa":
		var priv *rsa.PrivateKey
		if priv, err = rsa.GenerateKey(rand.Reader, 3072); err == nil {
			key = priv
			pk, err = ssh.NewPublicKey(&priv.PublicKey)
		}
	default:
		tb.Fatalf("SSHKey: unknown type %q", typ)
	}
	if err != nil {
		tb.Fatalf("SSHKey: generate %s: %v", typ, err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(key, name)
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(key, name, []byte(passphrase))
	}
	if err != nil {
		tb.Fatalf("SSHKey: marshal: %v", err)
	}
	path = filepath.Join(dir, name)
	pub = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " " + name
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", []byte(pub+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path, pub
}
