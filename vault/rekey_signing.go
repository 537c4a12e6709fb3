package vault

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// A rekey rotates the writer's signing key with the identity: a leaked
// identity folder holds both, and a rotation that left the old signing key a
// writer would let whoever holds it go on writing memory. The new key waits
// beside IDENTITY.new (IDENTITY.new.signing) until the moves; the rekey's
// commit, signed with the old key (a writer of its parent), lists the new one
// in its place.

// writerSwap is a writer's key replaced by another.
type writerSwap struct{ old, new keys.Writer }

// signingRotation returns the swap a rekey to the identity at next makes:
// none for a vault without writers, or whose signing key is not one of them
// (such a rekey's commit is refused as any of its commits would be).
func (v *Vault) signingRotation(ctx context.Context, next string, passphrase []byte) (*writerSwap, error) {
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	set, err := v.writers.writersAt(v.repo, snap.root)
	if err != nil || !set.has {
		return nil, err
	}
	pub, err := v.sign.publicKey()
	if err != nil {
		return nil, fmt.Errorf("vault: rekey: the signing key cannot be used: %w", err)
	}
	old, ok := set.find(pub)
	if !ok {
		return nil, nil
	}
	signer, err := keys.LoadSigner(next, keys.Passphrases{
		Given: func() []byte { return append([]byte(nil), passphrase...) },
		Ask:   v.keys.pass,
	})
	if err != nil {
		return nil, fmt.Errorf("vault: rekey: %w", err)
	}
	return &writerSwap{old: old, new: keys.WriterOf(signer.PublicKey(), old.Comment)}, nil
}

// swapWriter returns the change of the writers file of root that s makes, and
// its trailers; nil when root's writers no longer list s.old.
func (v *Vault) swapWriter(root gitlog.Hash, s writerSwap) (*gitlog.Change, []trailer, error) {
	set, err := v.writers.writersAt(v.repo, root)
	if err != nil || !set.has {
		return nil, nil, err
	}
	ws := make([]keys.Writer, 0, len(set.writers))
	found := false
	for _, w := range set.writers {
		switch {
		case w.Fingerprint == s.old.Fingerprint:
			found = true
			ws = append(ws, s.new)
		case w.Fingerprint != s.new.Fingerprint:
			ws = append(ws, w)
		}
	}
	if !found {
		return nil, nil, nil
	}
	return &gitlog.Change{Op: gitlog.Put, Path: keys.WritersPath, Data: keys.FormatWriters(ws)},
		[]trailer{{trWriter, "+ " + s.new.Key}, {trWriter, "- " + s.old.Key}}, nil
}
