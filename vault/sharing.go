package vault

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

// RecipientChange is a change of the keys a vault is encrypted to.
type RecipientChange struct {
	// Add are keys to add, each as keys.ParseRecipient takes it. A key that is
	// already a recipient is left as it is.
	Add []string
	// Remove are keys to remove, in the same forms (an SSH key's comment does
	// not matter). Each must be a recipient now.
	Remove []string
	// Comment, when set, is written as a comment line above the added keys.
	Comment string
	// Progress, when set, is called as files are re-encrypted, from one
	// goroutine at a time, with the files done so far and the total.
	Progress func(done, total int)

	// AddWriters and RemoveWriters change the writers in the same commit
	// (a member added or removed: a reader and a writer at once), as
	// ChangeWriters does.
	AddWriters    []keys.Writer
	RemoveWriters []string

	swap *writerSwap // a rekey's: the signing key the same commit rotates
	// upgrade seals a vault of format 2 under a new generation (format 3)
	// though no member changes (Seal).
	upgrade bool
}

// RecipientsResult says what a change of recipients did.
type RecipientsResult struct {
	Added   []keys.Recipient // keys added (keys already there are not listed)
	Removed []keys.Recipient
	Files   int    // memory files re-encrypted to the new recipients in the commit
	Resumed int    // of those, files an interrupted earlier run had already done
	Commit  string // the commit made; "" when nothing changed
}

// ChangeRecipients adds and removes recipients and re-encrypts every current
// memory file to the new set, all in one commit described by meta (its
// Command defaults to recipients-add, recipients-remove or recipients-change).
// Files are decrypted and encrypted on every core, without holding the
// writer lock; the lock is taken only to re-encrypt what changed meanwhile and
// commit. If the run is interrupted (ctx, a crash), running the same change
// again re-encrypts only the files left.
//
// History is not rewritten: earlier commits stay encrypted to the keys of
// their time, so a removed key can still read the history up to this commit.
//
// The error wraps ErrRecipients for a key that cannot be parsed or used, a
// key to remove that is not a recipient, an empty set, a set mixing
// post-quantum and classical keys, or a set that the identity in use would no
// longer be part of; ErrNoIdentity, ErrPassphrase or ErrDecrypt when the
// identity cannot read the files; ErrBusy when another re-encryption runs.
func (v *Vault) ChangeRecipients(ctx context.Context, meta Meta, ch RecipientChange) (RecipientsResult, error) {
	id, err := v.keys.identity()
	if err != nil {
		return RecipientsResult{}, err
	}
	return v.changeRecipients(ctx, meta, ch, id.Recipients)
}

// changeRecipients does ChangeRecipients; one of keep's keys must stay a
// recipient, so that the identity that will use the vault can read it.
func (v *Vault) changeRecipients(ctx context.Context, meta Meta, ch RecipientChange, keep []keys.Recipient) (RecipientsResult, error) {
	var res RecipientsResult
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	target, res, err := planChange(snap, ch, keep)
	if err != nil || len(res.Added)+len(res.Removed) == 0 && !ch.upgrade {
		return res, err
	}
	re, err := v.newReencryption(target, target.Fingerprint(), ch.Progress)
	if err != nil {
		return res, err
	}
	next := snap.names.key()
	if rotates(next, len(res.Removed) > 0) {
		if next, err = re.pendingGeneration(); err != nil {
			re.progress.close(false)
			return res, err
		}
	}
	re.gen = next
	finished := false
	defer func() { re.progress.close(finished) }()
	files, err := v.filesToReencrypt(snap, next)
	if err != nil {
		return res, err
	}
	resumed := 0
	for _, f := range files {
		if _, ok := re.done[f.hash]; ok {
			resumed++
		}
	}
	if err := re.run(ctx, files); err != nil {
		return res, err
	}
	res.Commit, res.Files, err = v.commitReencryption(ctx, meta, ch, keep, re, next, &res)
	if err != nil {
		return res, err
	}
	res.Resumed = min(resumed, res.Files)
	finished = true
	return res, nil
}

// filesToReencrypt lists the memory files a change of recipients encrypts
// again: every current one, but none when the tree stays under the same
// generation (format 3, members only added): its files are encrypted to the
// generation, which the new members open through the key file, so only the key
// file is wrapped anew and a member is added at the cost of one file.
func (v *Vault) filesToReencrypt(snap *Snapshot, next *seal.Key) ([]fileRef, error) {
	if k := snap.names.key(); k != nil && k.Generation() && sameKey(k, next) {
		return nil, nil
	}
	return v.memoryFiles(snap.root)
}

// planChange applies ch to the recipients of snap and checks the result.
func planChange(snap *Snapshot, ch RecipientChange, keep []keys.Recipient) (*keys.RecipientsFile, RecipientsResult, error) {
	var res RecipientsResult
	f, err := snap.recipientsFile()
	if err != nil {
		return nil, res, err
	}
	for _, s := range ch.Remove {
		r, err := keys.ParseRecipient(s)
		if err != nil {
			return nil, res, err
		}
		i := f.Index(r.Key)
		if i < 0 {
			return nil, res, fmt.Errorf("vault: remove recipient %s: not a recipient of the vault: %w", keys.QuoteKey(r.Key), ErrRecipients)
		}
		res.Removed = append(res.Removed, f.Entries[i].Recipient)
		f.Entries = slices.Delete(f.Entries, i, i+1)
	}
	above := []string{}
	if c := oneLine(strings.TrimSpace(ch.Comment)); c != "" {
		above = append(above, "# "+c)
	}
	for _, s := range ch.Add {
		r, err := keys.ParseRecipient(s)
		if err != nil {
			return nil, res, err
		}
		if f.Index(r.Key) >= 0 {
			continue
		}
		line := r.Key
		if r.Comment != "" && strings.HasPrefix(r.Type, "ssh-") {
			line += " " + r.Comment
		}
		f.Entries = append(f.Entries, keys.RecipientEntry{Above: above, Line: line, Recipient: r})
		res.Added = append(res.Added, r)
		above = nil
	}
	if err := f.Check(); err != nil {
		return nil, res, err
	}
	if !slices.ContainsFunc(keep, func(k keys.Recipient) bool { return k.Key == "" || f.Index(k.Key) >= 0 }) {
		return nil, res, fmt.Errorf("vault: after this change the identity in use (%s) could no longer read the vault: "+
			"add another of your keys first, or let another recipient remove you: %w", describeKeys(keep), ErrRecipients)
	}
	return f, res, nil
}

func describeKeys(rs []keys.Recipient) string {
	info := keys.IdentityInfo{Recipients: rs}
	d := info.Describe()
	return strings.TrimSuffix(strings.TrimPrefix(d, " ("), ")")
}

// newReencryption prepares a re-encryption to target, taking what an
// interrupted run of the same kind (fp: the set's fingerprint, or another
// name of it for another kind of run) left in the vault's local state.
func (v *Vault) newReencryption(target *keys.RecipientsFile, fp [32]byte, report func(int, int)) (*reencryption, error) {
	if _, err := v.keys.identity(); err != nil {
		return nil, err // unlock before starting the workers
	}
	rs, err := target.AgeRecipients(keys.PluginUI(v.opts.Passphrase))
	if err != nil {
		return nil, err
	}
	if _, err := encrypt(nil, rs); err != nil { // a plugin may refuse, or mix labels
		return nil, err
	}
	progress, done, err := openProgress(v.repo, fp)
	if err != nil {
		return nil, err
	}
	return &reencryption{v: v, fp: fp, rs: rs, done: done, progress: progress, report: report}, nil
}

// commitReencryption takes the writer lock, re-plans the change on the latest
// state (another writer may have committed since), re-encrypts what is not
// done yet and commits. It returns the commit and the number of files in it.
func (v *Vault) commitReencryption(ctx context.Context, meta Meta, ch RecipientChange, keep []keys.Recipient, re *reencryption, next *seal.Key, res *RecipientsResult) (string, int, error) {
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return "", 0, err
	}
	target, latest, err := planChange(snap, ch, keep)
	if err != nil {
		return "", 0, err
	}
	*res = latest
	if len(latest.Added)+len(latest.Removed) == 0 && !(ch.upgrade && !snap.names.key().Generation()) {
		return "", 0, nil // someone else made the same change meanwhile
	}
	if target.Fingerprint() != re.fp || rotates(snap.names.key(), len(latest.Removed) > 0) && sameKey(snap.names.key(), next) {
		return "", 0, fmt.Errorf("vault: the recipients changed while re-encrypting; run the command again: %w", ErrRecipients)
	}
	files, err := v.filesToReencrypt(snap, next)
	if err == nil {
		err = re.run(ctx, files)
	}
	if err != nil {
		return "", 0, err
	}
	var changes []gitlog.Change
	if k := snap.names.key(); k != nil {
		// A removed recipient holds the vault key too: a new one seals
		// every current name and size in this commit.
		if changes, err = v.resealed(ctx, k, next, snap.root, files, re.done, re.rs); err != nil {
			return "", 0, err
		}
	} else {
		changes = make([]gitlog.Change, 0, len(files)+1)
		for _, f := range files {
			changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: f.path, Data: re.done[f.hash]})
		}
	}
	changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: recipientsPath, Data: target.Bytes()})
	trailers := recipientTrailers(latest, len(files))
	if len(ch.AddWriters)+len(ch.RemoveWriters) > 0 {
		me, err := v.SigningWriter()
		if err != nil {
			return "", 0, err
		}
		wc, _, err := v.planWriters(snap.root, me, ch.AddWriters, ch.RemoveWriters)
		if err != nil {
			return "", 0, err
		}
		changes, trailers = append(changes, wc...), append(trailers, writerTrailers(ch.AddWriters, ch.RemoveWriters)...)
	}
	if ch.swap != nil {
		c, tr, err := v.swapWriter(snap.root, *ch.swap)
		if err != nil {
			return "", 0, err
		}
		if c != nil {
			changes, trailers = append(changes, *c), append(trailers, tr...)
		}
	}
	h, err := v.commitBulk(w, snap.commit, changes, recipientsMeta(meta, latest), trailers)
	if err != nil {
		return "", 0, err
	}
	return h.String(), len(files), nil
}

// recipientsMeta names the command of a change of recipients when meta does not.
func recipientsMeta(meta Meta, res RecipientsResult) Meta {
	if meta.Command == "" {
		switch {
		case len(res.Removed) == 0:
			meta.Command = "recipients-add"
		case len(res.Added) == 0:
			meta.Command = "recipients-remove"
		default:
			meta.Command = "recipients-change"
		}
	}
	return meta
}

func recipientTrailers(res RecipientsResult, files int) []trailer {
	var tr []trailer
	for _, r := range res.Added {
		tr = append(tr, trailer{trRecipientAdded, r.Type + " " + keys.Abbrev(r.Key)})
	}
	for _, r := range res.Removed {
		tr = append(tr, trailer{trRecipientRemoved, r.Type + " " + keys.Abbrev(r.Key)})
	}
	return append(tr, trailer{trReencrypted, fmt.Sprint(files)})
}

// commitBulk commits changes that are not one memory command: subject
// "<command> <first key>[ (+N more)]", the trailers of meta, then extra. The
// commit runs under the writer lock w.
func (v *Vault) commitBulk(w *gitlog.Writer, parent gitlog.Hash, changes []gitlog.Change, meta Meta, extra []trailer) (gitlog.Hash, error) {
	subject := meta.Command
	if len(extra) > 1 {
		_, first, _ := strings.Cut(extra[0].value, " ")
		subject += " " + first
		if len(extra) > 2 {
			subject += fmt.Sprintf(" (+%d more)", len(extra)-2)
		}
	}
	return v.writeCommit(w, parent, subject, append(metaTrailers(meta, "", ""), extra...), changes, meta.Agent, "memvault")
}

// rotates reports whether a change of recipients of a tree whose key is old
// (nil: the plain format, which has none) seals it under a new generation:
// when it removes a member, who holds old, and when old is a key of format 2,
// so that the vault becomes format 3. Members only added keep the key.
func rotates(old *seal.Key, removing bool) bool {
	return old != nil && (removing || !old.Generation())
}
