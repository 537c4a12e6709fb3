package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"filippo.io/age/armor"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// A vault's commits are signed by their writer with an SSH key, in the form
// git's gpg.format=ssh makes and `git verify-commit` checks: the namespace
// "git", SHA-512. An SSH identity signs with itself; an age identity with an
// ed25519 key made for it and kept beside it, IDENTITY.signing (an OpenSSH
// private key, mode 0600, under the identity's passphrase when it has one).
const (
	SigNamespace = "git"
	SigHash      = sshsig.HashSHA512
)

// SigningKeyFile is where the signing key of the age identity at identity is kept.
func SigningKeyFile(identity string) string { return identity + ".signing" }

// Passphrases are the ways LoadSigner unlocks a key: Given returns the
// passphrase that unlocked the identity, to try first (nil when none); Ask
// asks for one; Remember keeps one that worked.
type Passphrases struct {
	Given    func() []byte
	Ask      func(prompt string) ([]byte, error)
	Remember func([]byte)
}

// LoadSigner returns the signing key of the identity at identity: the SSH
// key itself, or IDENTITY.signing beside an age identity, made (under the
// identity's passphrase when it has one) if it is not there yet.
func LoadSigner(identity string, pw Passphrases) (ssh.Signer, error) {
	data, err := readKeyFile(identity)
	if err != nil {
		return nil, err
	}
	defer clear(data)
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("-----BEGIN")) && !bytes.HasPrefix(trimmed, []byte(armor.Header)) {
		return parseSigner(identity, data, "SSH key", pw)
	}
	path := SigningKeyFile(identity)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		protected := bytes.HasPrefix(trimmed, []byte(armor.Header)) || bytes.HasPrefix(data, []byte("age-encryption.org/"))
		// Another process making the vault at once may have made it first.
		if err := createSigner(path, identity, protected, pw); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	key, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	defer clear(key)
	return parseSigner(path, key, "signing key", pw)
}

// parseSigner reads an OpenSSH private key, unlocking it with the identity's
// passphrase first, then asking.
func parseSigner(path string, data []byte, what string, pw Passphrases) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(data)
	var missingPass *ssh.PassphraseMissingError
	if !errors.As(err, &missingPass) {
		if err != nil {
			return nil, fmt.Errorf("vault: %s %s is not a usable SSH private key: %w", what, path, ErrNoIdentity)
		}
		return signer, nil
	}
	if pw.Given != nil {
		if given := pw.Given(); len(given) > 0 {
			signer, err := ssh.ParsePrivateKeyWithPassphrase(data, given)
			clear(given)
			if err == nil {
				return signer, nil
			}
		}
	}
	p, err := askPassphrase(pw.Ask, path, what)
	if err != nil {
		return nil, err
	}
	defer clear(p)
	signer, err = ssh.ParsePrivateKeyWithPassphrase(data, p)
	if errors.Is(err, x509.IncorrectPasswordError) {
		return nil, fmt.Errorf("vault: %s %s: wrong passphrase: %w", what, path, ErrPassphrase)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: %s %s is not a usable SSH private key: %w", what, path, ErrNoIdentity)
	}
	if pw.Remember != nil {
		pw.Remember(p)
	}
	return signer, nil
}

// createSigner makes the signing key of an age identity at path, under the
// identity's passphrase when the identity is protected.
func createSigner(path, identity string, protected bool, pw Passphrases) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("vault: make a signing key: %w", err)
	}
	var block *pem.Block
	if protected {
		var p []byte
		if pw.Given != nil {
			p = pw.Given()
		}
		if len(p) == 0 {
			if p, err = askPassphrase(pw.Ask, identity, "identity (to protect its new signing key)"); err != nil {
				return err
			}
		}
		defer clear(p)
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "memvault signing key", p)
	} else {
		block, err = ssh.MarshalPrivateKey(priv, "memvault signing key")
	}
	if err != nil {
		return fmt.Errorf("vault: make a signing key: %w", err)
	}
	data := pem.EncodeToMemory(block)
	defer clear(data)
	return writeKeyFile(path, data, false)
}
