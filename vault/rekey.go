package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memvault/memvault/vault/internal/durable"
	"github.com/memvault/memvault/vault/keys"
)

// RekeyOptions say what Rekey makes.
type RekeyOptions struct {
	// PostQuantum makes the new key post-quantum; it is implied when the
	// current key is.
	PostQuantum bool
	// Passphrase, when not empty, protects the new identity file.
	Passphrase []byte
	// Progress is as in RecipientChange.
	Progress func(done, total int)
}

// RekeyResult says what Rekey did.
type RekeyResult struct {
	RecipientsResult
	Identity keys.IdentityInfo // the new identity, now at the identity path
	Retired  string            // where the old identity file is now
	// Writer is the fingerprint of the new signing key, which the rekey's
	// commit made a writer in place of the old one; "" when the vault has no
	// writers list.
	Writer string
}

// Rekey rotates the identity: it generates a new key, re-encrypts every
// current memory file to it instead of the old identity's keys in one commit
// (Command "rekey" unless meta says otherwise), then moves the old identity
// file to IDENTITY.old and the new one to IDENTITY. An earlier IDENTITY.old
// becomes IDENTITY.old.1 (or .2, …): retired keys are never deleted, since
// the history before each rotation stays encrypted to them, and a vault opened
// with IDENTITY reads with them too (see RetiredIdentities).
//
// Until its commit, the new key waits in IDENTITY.new (mode 0600): a Rekey
// that was interrupted takes it up again and resumes the re-encryption; one
// interrupted after the commit only finishes the moves.
//
// The error wraps ErrNoIdentity when the identity is an SSH key or a plugin's
// (rotate those yourself, then add and remove recipients), and otherwise what
// ChangeRecipients returns.
func (v *Vault) Rekey(ctx context.Context, meta Meta, opts RekeyOptions) (RekeyResult, error) {
	var res RekeyResult
	path := v.opts.IdentityFile
	if rekeyUnfinished(path) {
		return res, v.finishRekey(path, &res) // interrupted in its moves
	}
	old, err := v.keys.identity()
	if err != nil {
		return res, err
	}
	if len(opts.Passphrase) == 0 && old.Protected {
		// The new key keeps the protection the old one had: under the
		// passphrase that unlocked it, unless the caller gave another.
		opts.Passphrase = v.keys.unlockingPassphrase()
		defer clear(opts.Passphrase)
	}
	for _, r := range old.Recipients {
		if r.Type != keys.TypeX25519 && r.Type != keys.TypeHybrid {
			return res, fmt.Errorf("vault: rekey: the identity %s is an %s key, which memvault does not own: "+
				"make a new key yourself, then add it and remove the old one as recipients: %w", path, r.Type, ErrNoIdentity)
		}
		opts.PostQuantum = opts.PostQuantum || r.PostQuantum
	}
	next, err := v.pendingIdentity(path+".new", opts)
	if err != nil {
		return res, err
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	current, err := snap.recipientsFile()
	if err != nil {
		return res, err
	}
	ch := RecipientChange{Comment: "rekey " + v.opts.Now().UTC().Format(time.DateOnly), Progress: opts.Progress}
	for _, r := range next.Recipients {
		ch.Add = append(ch.Add, r.Key)
	}
	for _, r := range old.Recipients {
		if current.Index(r.Key) >= 0 {
			ch.Remove = append(ch.Remove, r.Key)
		}
	}
	if ch.swap, err = v.signingRotation(ctx, path+".new", opts.Passphrase); err != nil {
		return res, err
	}
	if meta.Command == "" {
		meta.Command = "rekey"
	}
	if res.RecipientsResult, err = v.changeRecipients(ctx, meta, ch, next.Recipients); err != nil {
		return res, err
	}
	if ch.swap != nil && res.Commit != "" {
		res.Writer = ch.swap.new.Fingerprint
	}
	if err := v.finishRekey(path, &res); err != nil {
		return res, err
	}
	next.Path = path
	res.Identity = next.IdentityInfo
	v.keys.mu.Lock()
	v.keys.id, v.keys.err = next, nil
	v.keys.mu.Unlock()
	v.keys.omu.Lock()
	v.keys.loaded, v.keys.others, v.keys.skipped = false, nil, nil // the key just retired joins them
	v.keys.omu.Unlock()
	v.sign.forget() // the new signing key is at IDENTITY.signing now
	return res, nil
}

// pendingIdentity returns the key a Rekey rotates to: the one an interrupted
// Rekey left at path, or a new one written there.
func (v *Vault) pendingIdentity(path string, opts RekeyOptions) (*keys.File, error) {
	if missing(path) {
		return keys.CreateFile(path, keys.IdentityOptions{PostQuantum: opts.PostQuantum, Passphrase: opts.Passphrase})
	}
	pass := v.opts.Passphrase
	if len(opts.Passphrase) > 0 {
		pass = func(string) ([]byte, error) { return append([]byte(nil), opts.Passphrase...), nil }
	}
	return keys.ReadFile(path, pass, true)
}

// finishRekey moves the old identity file aside and the new one in place.
func (v *Vault) finishRekey(path string, res *RekeyResult) error {
	retired, err := installRekeyed(path)
	if err != nil {
		return err
	}
	res.Retired = retired
	info, err := keys.ReadIdentity(path, func(string) ([]byte, error) { return nil, errors.New("not needed") })
	if err == nil {
		res.Identity = info
	}
	res.Identity.Path = path
	return nil
}

// installRekeyed moves a rekey's identity files once its commit is made:
// path.old to path.old.N, path to path.old, path.new to path; then the same
// for the signing keys beside them (path.signing, path.old.signing,
// path.new.signing). Each rename is made durable before the next, so that
// power lost at any point leaves a state this function, run again, finishes:
// one that overwrote a name before the move out of it reached the disk would
// lose a key.
func installRekeyed(path string) (retired string, err error) {
	retired = path + ".old"
	if err := installChain(path, retired, path+".new", func(n int) string { return fmt.Sprintf("%s.%d", retired, n) }); err != nil {
		return "", err
	}
	sig := keys.SigningKeyFile
	err = installChain(sig(path), sig(retired), sig(path+".new"), func(n int) string { return sig(fmt.Sprintf("%s.%d", retired, n)) })
	return retired, err
}

// rekeyRename is os.Rename; a test stops a rekey between two of its moves.
var rekeyRename = os.Rename

// rekeyUnfinished tells whether a rekey of the identity at path stopped in
// its moves: the old identity moved aside and the new one not in yet, or the
// signing keys not moved yet.
func rekeyUnfinished(path string) bool {
	return (missing(path) && !missing(path+".new")) ||
		(missing(path+".new") && !missing(keys.SigningKeyFile(path+".new")))
}

// installChain puts next in place of cur when next is there: cur moves to old
// first, and an earlier old to the first free numbered name.
func installChain(cur, old, next string, numbered func(n int) string) error {
	if missing(next) {
		return nil
	}
	dir := filepath.Dir(cur)
	move := func(from, to, what string) error {
		if err := rekeyRename(from, to); err != nil {
			return fmt.Errorf("vault: rekey: %s: %w", what, err)
		}
		if err := durable.SyncDir(dir); err != nil {
			return fmt.Errorf("vault: rekey: %w", err)
		}
		return nil
	}
	if !missing(cur) {
		if !missing(old) {
			n := 1
			for !missing(numbered(n)) {
				n++
			}
			if err := move(old, numbered(n), "keep "+old); err != nil {
				return err
			}
		}
		if err := move(cur, old, "retire "+cur); err != nil {
			return err
		}
	}
	return move(next, cur, "install "+next)
}

func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}
