package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// signingKey loads the writer's key once, on the first commit that needs it
// (see keys.LoadSigner).
type signingKey struct {
	identity string
	keys     *keyring // for the passphrase that unlocked the identity

	mu     sync.Mutex
	signer ssh.Signer
	err    error
}

// sign signs a commit's payload with the writer's key; it is a gitlog.CommitInfo.Sign.
func (s *signingKey) sign(payload []byte) (string, error) {
	signer, err := s.get()
	if err != nil {
		return "", err
	}
	return signWith(signer, payload)
}

// signWith signs a commit's payload as git's gpg.format=ssh does.
func signWith(signer ssh.Signer, payload []byte) (string, error) {
	sig, err := sshsig.Sign(bytes.NewReader(payload), signer, keys.SigHash, keys.SigNamespace)
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

// pending is the signing key a rekey stopped between its commit and its
// moves left beside IDENTITY.new, or nil.
func (s *signingKey) pending() (ssh.Signer, error) {
	next := s.identity + ".new"
	if missing(next) || missing(keys.SigningKeyFile(next)) {
		return nil, nil
	}
	return keys.LoadSigner(next, keys.Passphrases{
		Given: s.keys.unlockingPassphrase, Ask: s.keys.pass, Remember: s.keys.rememberPassphrase,
	})
}

// forget lets go of the loaded key: a rekey moved another in.
func (s *signingKey) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signer, s.err = nil, nil
}

func (s *signingKey) get() (ssh.Signer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signer == nil && s.err == nil {
		if rekeyUnfinished(s.identity) {
			// A rekey stopped in its moves: the keyring finishes them.
			if _, err := s.keys.identity(); err != nil {
				return nil, err
			}
		}
		s.signer, s.err = keys.LoadSigner(s.identity, keys.Passphrases{
			Given: s.keys.unlockingPassphrase, Ask: s.keys.pass, Remember: s.keys.rememberPassphrase,
		})
	}
	return s.signer, s.err
}

// skipSigning turns signing and its check off: only BenchmarkSigning sets
// it, to measure what they cost a write and a sync, old and new in one run.
var skipSigning atomic.Bool

// signerFor returns the signer of a commit with these parents. When a
// parent's tree lists writers, the signing key must be one of them: a commit
// others would refuse is not made. A vault without writers is signed when the
// key can be had, and written unsigned when not (a protected key with no way
// to ask for its passphrase).
func (v *Vault) signerFor(parents ...gitlog.Hash) (func([]byte) (string, error), error) {
	if skipSigning.Load() {
		return nil, nil
	}
	var sets []writerSet
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
		if set.has {
			sets = append(sets, set)
		}
	}
	if len(sets) == 0 {
		return func(payload []byte) (string, error) {
			sig, err := v.sign.sign(payload)
			if err != nil {
				return "", nil
			}
			return sig, nil
		}, nil
	}
	signer, err := v.sign.get()
	if err != nil {
		return nil, fmt.Errorf("vault: this vault takes only signed commits, and the signing key cannot be used: %w", err)
	}
	if !listedIn(sets, signer.PublicKey()) {
		// Another process's rekey may have moved a new key in since this one
		// was loaded; or a rekey stopped between its commit and its moves,
		// and the key its commit made a writer waits beside IDENTITY.new.
		v.sign.forget()
		again, _ := v.sign.get()
		next, _ := v.sign.pending()
		switch {
		case again != nil && listedIn(sets, again.PublicKey()):
			signer = again
		case next != nil && listedIn(sets, next.PublicKey()):
			signer = next
		default:
			me := keys.WriterOf(signer.PublicKey(), "")
			return nil, fmt.Errorf("vault: the signing key %s is not a writer of this vault: a writer can add it with "+
				"memvault writers add '%s': %w", me.Fingerprint, me.Key, ErrNotWriter)
		}
	}
	return func(payload []byte) (string, error) { return signWith(signer, payload) }, nil
}

// listedIn tells whether every set lists pub.
func listedIn(sets []writerSet, pub ssh.PublicKey) bool {
	for _, set := range sets {
		if _, ok := set.find(pub); !ok {
			return false
		}
	}
	return true
}

// signed refuses commit c unless a writer of the vault signed it (see
// writersCache.signedBy).
func (a *admission) signed(c *gitlog.Commit) error {
	if err, ok := a.sigs[c.Hash]; ok {
		return err
	}
	return a.judgeSignature(c)
}

// judgeSignature is signed, without the answers verifyAll found. It notes
// who signed c, for the trust rules (trust.go).
func (a *admission) judgeSignature(c *gitlog.Commit) error {
	w, ok, err := a.writers.signedBy(a.repo, c)
	if ok {
		a.noteSigner(c.Hash, w)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errUnsigned), errors.Is(err, errBadSig), errors.Is(err, errNotAWriter), errors.Is(err, errNotWriterOf):
		subject, _ := parseMessage(c.Message)
		return fmt.Errorf("vault: commit %s (%s): %v: %w", c.Hash, oneLine(subject), err, ErrUnsigned)
	}
	return fmt.Errorf("vault: admit %s: %w", c.Hash, err)
}

// minParallelVerify is how many commits make verifyAll worth more than one
// goroutine.
const minParallelVerify = 32

// verifyAll judges the signatures of cs on every core the process may use,
// and keeps each answer for signed: verifying is most of what signatures add
// to a sync of many commits, and each commit's is its own. The answers are
// read in the order admission judges the commits, so the first refusal named
// is the one a check on one core would name.
func (a *admission) verifyAll(cs []*gitlog.Commit) error {
	workers := min(runtime.GOMAXPROCS(0), len(cs)/minParallelVerify)
	if workers < 2 {
		return nil
	}
	errs := make([]error, len(cs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cs) || a.ctx.Err() != nil {
					return
				}
				errs[i] = a.judgeSignature(cs[i])
			}
		}()
	}
	wg.Wait()
	if err := a.ctx.Err(); err != nil {
		return err
	}
	a.sigs = make(map[gitlog.Hash]error, len(cs))
	for i, c := range cs {
		a.sigs[c.Hash] = errs[i]
	}
	return nil
}

// unsignedCommits lists, for fsck, the commits of the history from head that
// no writer signed where writers were listed: one sentence each.
func (v *Vault) unsignedCommits(ctx context.Context, head gitlog.Hash) ([]string, error) {
	var out []string
	err := eachCommit(ctx, v.repo, head, func(c *gitlog.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, _, err := v.writers.signedBy(v.repo, c); err != nil {
			out = append(out, fmt.Sprintf("commit %s: %v", c.Hash, err))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vault: fsck: %w", err)
	}
	return out, nil
}
