package vault

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"filippo.io/age/armor"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/gitlog"
)

// A vault's commits are signed by their writer with an SSH key, in the form
// git's gpg.format=ssh makes and `git verify-commit` checks: the namespace
// "git", SHA-512. An SSH identity signs with itself; an age identity with an
// ed25519 key made for it and kept beside it, IDENTITY.signing (an OpenSSH
// private key, mode 0600, under the identity's passphrase when it has one).
const (
	sigNamespace = "git"
	sigHash      = sshsig.HashSHA512
)

// SigningKeyFile is where the signing key of the age identity at identity is kept.
func SigningKeyFile(identity string) string { return identity + ".signing" }

// signingKey loads the writer's key once, on the first commit that needs it.
type signingKey struct {
	identity string
	keys     *keyring // for the passphrase that unlocked the identity

	mu     sync.Mutex
	signer ssh.Signer
	err    error
}

// sign signs a commit's payload; it is a gitlog.Signer.
func (s *signingKey) sign(payload []byte) (string, error) {
	signer, err := s.get()
	if err != nil {
		return "", err
	}
	sig, err := sshsig.Sign(bytes.NewReader(payload), signer, sigHash, sigNamespace)
	if err != nil {
		return "", fmt.Errorf("vault: sign: %w", err)
	}
	return string(sshsig.Armor(sig)), nil
}

// publicKey is the writer's public key, loading (or making) the signing key.
func (s *signingKey) publicKey() (ssh.PublicKey, error) {
	signer, err := s.get()
	if err != nil {
		return nil, err
	}
	return signer.PublicKey(), nil
}

func (s *signingKey) get() (ssh.Signer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signer == nil && s.err == nil {
		s.signer, s.err = s.load()
	}
	return s.signer, s.err
}

func (s *signingKey) load() (ssh.Signer, error) {
	data, err := readKeyFile(s.identity)
	if err != nil {
		return nil, err
	}
	defer clear(data)
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("-----BEGIN")) && !bytes.HasPrefix(trimmed, []byte(armor.Header)) {
		return s.parse(s.identity, data, "SSH key")
	}
	path := SigningKeyFile(s.identity)
	if missing(path) {
		protected := bytes.HasPrefix(trimmed, []byte(armor.Header)) || bytes.HasPrefix(data, []byte("age-encryption.org/"))
		// Another process making the vault at once may have made it first.
		if err := s.create(path, protected); err != nil && !errors.Is(err, ErrExist) {
			return nil, err
		}
	}
	key, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	defer clear(key)
	return s.parse(path, key, "signing key")
}

// parse reads an OpenSSH private key, unlocking it with the identity's
// passphrase first, then asking.
func (s *signingKey) parse(path string, data []byte, what string) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(data)
	var missingPass *ssh.PassphraseMissingError
	if !errors.As(err, &missingPass) {
		if err != nil {
			return nil, fmt.Errorf("vault: %s %s is not a usable SSH private key: %w", what, path, ErrNoIdentity)
		}
		return signer, nil
	}
	if given := s.keys.unlockingPassphrase(); len(given) > 0 {
		signer, err := ssh.ParsePrivateKeyWithPassphrase(data, given)
		clear(given)
		if err == nil {
			return signer, nil
		}
	}
	pw, err := askPassphrase(s.keys.pass, path, what)
	if err != nil {
		return nil, err
	}
	defer clear(pw)
	signer, err = ssh.ParsePrivateKeyWithPassphrase(data, pw)
	if errors.Is(err, x509.IncorrectPasswordError) {
		return nil, fmt.Errorf("vault: %s %s: wrong passphrase: %w", what, path, ErrPassphrase)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: %s %s is not a usable SSH private key: %w", what, path, ErrNoIdentity)
	}
	s.keys.rememberPassphrase(pw)
	return signer, nil
}

// create makes the signing key of an age identity, under the identity's
// passphrase when the identity is protected.
func (s *signingKey) create(path string, protected bool) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("vault: make a signing key: %w", err)
	}
	var block *pem.Block
	if protected {
		pw := s.keys.unlockingPassphrase()
		if len(pw) == 0 {
			if pw, err = askPassphrase(s.keys.pass, s.identity, "identity (to protect its new signing key)"); err != nil {
				return err
			}
		}
		defer clear(pw)
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "memvault signing key", pw)
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

// skipSigning turns signing and its check off: only BenchmarkSigning sets
// it, to measure what they cost a write and a sync, old and new in one run.
var skipSigning atomic.Bool

// ErrNotWriter: the vault takes only commits its writers signed, and this
// identity's signing key is not one of them.
var ErrNotWriter = errors.New("not a writer of the vault")

// signerFor returns the signer of a commit with these parents. When a
// parent's tree lists writers, the signing key must be one of them: a commit
// others would refuse is not made. A vault without writers is signed when the
// key can be had, and written unsigned when not (a protected key with no way
// to ask for its passphrase).
func (v *Vault) signerFor(parents ...gitlog.Hash) (gitlog.Signer, error) {
	if skipSigning.Load() {
		return nil, nil
	}
	required := false
	for _, p := range parents {
		if p.IsZero() {
			continue
		}
		root, err := v.repo.RootTree(p)
		if err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
		set, err := v.writers.writersAt(v.repo, root)
		if err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
		if !set.has {
			continue
		}
		required = true
		pub, err := v.sign.publicKey()
		if err != nil {
			return nil, fmt.Errorf("vault: this vault takes only signed commits, and the signing key cannot be used: %w", err)
		}
		if _, ok := set.find(pub); !ok {
			me := writerOf(pub, "")
			return nil, fmt.Errorf("vault: the signing key %s is not a writer of this vault: a writer can add it with "+
				"memvault writers add '%s': %w", me.Fingerprint, me.Key, ErrNotWriter)
		}
	}
	if required {
		return v.sign.sign, nil
	}
	return func(payload []byte) (string, error) {
		sig, err := v.sign.sign(payload)
		if err != nil {
			return "", nil
		}
		return sig, nil
	}, nil
}

// ErrUnsigned: a commit that arrived is not signed by a writer of the vault
// (unsigned, badly signed, or signed by a key that is not a writer in its
// parents). Nothing moved; no flag takes such a commit.
var ErrUnsigned = errors.New("a commit that no writer of the vault signed")

// signed refuses commit c unless a writer of the vault signed it (see
// writersCache.signedBy).
func (a *admission) signed(c *gitlog.Commit) error {
	_, _, err := a.writers.signedBy(a.repo, c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errUnsigned), errors.Is(err, errBadSig), errors.Is(err, errNotAWriter), errors.Is(err, errNotWriterOf):
		return fmt.Errorf("vault: commit %s (%s): %v: %w", c.Hash, oneLine(firstLine(c.Message)), err, ErrUnsigned)
	}
	return fmt.Errorf("vault: admit %s: %w", c.Hash, err)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// unsignedCommits lists, for fsck, the commits of the history from head that
// no writer signed where writers were listed: one sentence each.
func (v *Vault) unsignedCommits(ctx context.Context, head gitlog.Hash) ([]string, error) {
	var out []string
	seen := map[gitlog.Hash]bool{}
	stack := []gitlog.Hash{head}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h.IsZero() || seen[h] {
			continue
		}
		seen[h] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return nil, fmt.Errorf("vault: fsck: %w", err)
		}
		if _, _, err := v.writers.signedBy(v.repo, c); err != nil {
			out = append(out, fmt.Sprintf("commit %s: %v", h, err))
		}
		stack = append(stack, c.ParentHashes...)
	}
	return out, nil
}
