package vault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

// The conversion of a vault of the plain format to the sealed one: one commit
// that holds a new vault key (a generation of format 3), and every current memory file under
// its sealed name, its plaintext padded and its size header sealed. It is a
// re-encryption to the same recipients (reencrypt.go) whose plaintexts are
// padded, so it runs on every core, keeps its ciphertexts in the progress file
// as it goes, and an interrupted run goes on from there. The commit goes
// through the one write path every commit takes; until it lands the vault is
// as it was. History before it is never rewritten: its trees keep their plain
// names, and every reader crosses from one to the other where a path's tree
// path changes between a commit and its parent (pathInParent, diffOpened), as
// across a rotation of the vault key.

// SealOptions say how Seal reports its work.
type SealOptions struct {
	// Progress is as in RecipientChange.
	Progress func(done, total int)
}

// SealResult says what Seal did.
type SealResult struct {
	Files   int    // memory files sealed in the commit
	Resumed int    // of those, files an interrupted earlier run had already done
	Commit  string // the commit made
}

// Seal converts a vault of the plain format (or of format 2, the sealed format
// without key generations) to format 3 in one commit described by meta (its
// Command defaults to "seal"): a new vault key encrypted to the vault's
// recipients, and every current memory file
// sealed under its name with its plaintext padded. Plaintext is only ever in
// memory. Commits before this one keep their names: history is never
// rewritten. Other clones take the commit with their next sync.
//
// Nothing changes when the error wraps ErrSealed (the vault is of format 3
// already); ErrNoIdentity, ErrPassphrase or ErrDecrypt (a file the identity
// cannot read); is a *PathError (a path whose segment is too long to seal:
// rename it first); wraps ErrNotWriter (this identity may not write the
// vault), ErrRecipients (the recipients changed meanwhile), ErrBusy (another
// re-encryption runs), or the context's error. An interrupted
// run leaves the vault as it was; running Seal again goes on with what it had
// encrypted.
func (v *Vault) Seal(ctx context.Context, meta Meta, opts SealOptions) (SealResult, error) {
	var res SealResult
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	if k := snap.names.key(); k != nil && k.Generation() {
		return res, fmt.Errorf("vault: seal: %w", ErrSealed)
	} else if k != nil {
		// Format 2: one commit seals it under a generation (format 3), to
		// the same recipients, its keychain naming every key file of the
		// history.
		if meta.Command == "" {
			meta.Command = "seal"
		}
		id, err := v.keys.identity()
		if err != nil {
			return res, err
		}
		rr, err := v.changeRecipients(ctx, meta, RecipientChange{Progress: opts.Progress, upgrade: true}, id.Recipients)
		return SealResult{Files: rr.Files, Resumed: rr.Resumed, Commit: rr.Commit}, err
	}
	// One who may not write this vault learns it before the work, not after.
	if _, err := v.signerFor(snap.commit); err != nil {
		return res, err
	}
	target, err := snap.recipientsFile()
	if err != nil {
		return res, err
	}
	// The progress of a conversion is its own: its ciphertexts are of padded
	// plaintexts, never to be taken up by a change of recipients.
	re, err := v.newReencryption(target, sealingFingerprint(target), opts.Progress)
	if err != nil {
		return res, err
	}
	finished := false
	defer func() { re.progress.close(finished) }()
	re.pad = true
	k, err := re.pendingGeneration()
	if err != nil {
		return res, err
	}
	re.gen = k
	files, err := v.sealable(snap.root, k)
	if err != nil {
		return res, err
	}
	for _, f := range files {
		if _, ok := re.done[f.hash]; ok {
			res.Resumed++
		}
	}
	if err := re.run(ctx, files); err != nil {
		return res, err
	}
	if res.Commit, res.Files, err = v.commitSeal(ctx, meta, k, re); err != nil {
		return res, err
	}
	res.Resumed = min(res.Resumed, res.Files)
	finished = true
	return res, nil
}

// sealingFingerprint names the progress file of a conversion to the sealed
// format under the recipient set target.
func sealingFingerprint(target *keys.RecipientsFile) [32]byte {
	fp := target.Fingerprint()
	return sha256.Sum256(append([]byte("memvault seal\x00"), fp[:]...))
}

// sealable lists the memory files of the plain tree root, and refuses the
// first whose path the sealed format cannot store under k.
func (v *Vault) sealable(root gitlog.Hash, k *seal.Key) ([]fileRef, error) {
	files, err := v.memoryFiles(root)
	if err != nil {
		return nil, err
	}
	to := codecOf(k, nil)
	for _, f := range files {
		if _, err := to.treePath(memPath(f.path)); err != nil {
			return nil, fmt.Errorf("vault: seal: %w (rename it first)", err)
		}
	}
	return files, nil
}

// commitSeal takes the writer lock, checks the vault is still plain and its
// recipients the ones encrypted to, encrypts what changed meanwhile, and
// commits the conversion. It returns the commit and the number of files.
func (v *Vault) commitSeal(ctx context.Context, meta Meta, k *seal.Key, re *reencryption) (string, int, error) {
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return "", 0, err
	}
	if snap.names.format() != formatVersion {
		return "", 0, fmt.Errorf("vault: seal: %w", ErrSealed)
	}
	target, err := snap.recipientsFile()
	if err != nil {
		return "", 0, err
	}
	if sealingFingerprint(target) != re.fp {
		return "", 0, fmt.Errorf("vault: seal: the recipients changed while encrypting; run the command again: %w", ErrRecipients)
	}
	files, err := v.sealable(snap.root, k)
	if err == nil {
		err = re.run(ctx, files)
	}
	if err != nil {
		return "", 0, err
	}
	kf, err := v.keyFile(k, re.rs)
	if err != nil {
		return "", 0, err
	}
	chain, err := k.SealKeychain(seal.Keychain{})
	if err != nil {
		return "", 0, err
	}
	changes := make([]gitlog.Change, 0, len(files)+4)
	if len(files) > 0 { // else there is no memories/ in the tree
		changes = append(changes, gitlog.Change{Op: gitlog.Delete, Path: memDir})
	}
	to := codecOf(k, nil)
	for _, f := range files {
		p := memPath(f.path)
		size, err := v.blobPlainSize(p, f.hash)
		if err != nil {
			return "", 0, err
		}
		ct := re.done[f.hash]
		hdr, err := age.ExtractHeader(bytes.NewReader(ct))
		if err != nil {
			return "", 0, fmt.Errorf("vault: encrypt: %w", err)
		}
		sh, err := k.SealSize(size, hdr)
		if err != nil {
			return "", 0, err
		}
		tp, err := to.treePath(p)
		if err != nil {
			return "", 0, err
		}
		changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: tp, Data: append(sh, ct...)})
	}
	changes = append(changes,
		gitlog.Change{Op: gitlog.Put, Path: keyPath, Data: kf},
		gitlog.Change{Op: gitlog.Put, Path: keychainPath, Data: chain},
		gitlog.Change{Op: gitlog.Put, Path: formatPath, Data: []byte(generationsFormatVersion + "\n")})
	if meta.Command == "" {
		meta.Command = "seal"
	}
	trailers := append(metaTrailers(meta, "", ""), trailer{trReencrypted, fmt.Sprint(len(files))})
	h, err := v.writeCommit(w, snap.commit, meta.Command, trailers, changes, meta.Agent, "memvault")
	if err != nil {
		return "", 0, err
	}
	return h.String(), len(files), nil
}

// refuseRevertOfSeal refuses the revert of commit h, whose tree is after and
// its first parent's before (zero: none), when h converted the vault to the
// sealed format: it changed no memory, so a revert by lines would find
// nothing to undo and say so, which is not what happened; and a vault is not
// converted back.
func (v *Vault) refuseRevertOfSeal(h, before, after gitlog.Hash) error {
	if before.IsZero() {
		return nil
	}
	was, err := v.sealKeyAt(before)
	if err != nil || was != nil {
		return err
	}
	now, err := v.sealKeyAt(after)
	if err != nil || now == nil {
		return err
	}
	return fmt.Errorf("vault: revert %s: that commit converted the vault to the sealed format and changed no memory; "+
		"a vault is not converted back (restore or roll back to a revision before it to bring back what memory held then): %w", shortHash(h), ErrInvalid)
}
