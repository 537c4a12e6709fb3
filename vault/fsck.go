package vault

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// ageMagic starts every age file; a memory blob without it was stored in the clear
// or is not what memvault wrote.
const ageMagic = "age-encryption.org/v1\n"

// Fsck checks the vault and returns what is wrong, as sentences for a person: the
// branch and every object reachable from it (present, decodable, hashing to its
// name, within the vault's size limits); every commit of the whole history passes
// what sync's admission checks (layout, modes, names, age files within the size
// limit, format), one line per refused entry with its commit and path, except
// those a Memory-Left-Out trailer names (LeaveOutRefused); every memory file of
// the current state decrypts with the identity; the recipients and format files
// parse; the identity file is private; every commit made once the vault had
// writers is signed by a writer of its parents. No blob is read past the
// vault's limit.
// The error is only for a failure to run the check.
func (v *Vault) Fsck(ctx context.Context) ([]string, error) {
	var out []string
	var heads []gitlog.Entry
	problems, err := v.repo.Check(ctx, func(p string, h gitlog.Hash, head bool) {
		if head && strings.HasPrefix(p, memDir+"/") {
			heads = append(heads, gitlog.Entry{Name: p, Hash: h})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("vault: fsck: %w", err)
	}
	for _, p := range problems {
		out = append(out, p.String())
	}
	rs, err := v.historyRefusals(ctx, mustHead(v.repo))
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && len(problems) == 0:
		out = append(out, fmt.Sprintf("the history could not be checked as sync checks what arrives: %v", err))
	}
	for _, r := range rs {
		out = append(out, r.String())
	}
	if k, err := v.currentKey(); err == nil && k != nil {
		// Beyond what admission checks of each commit's changes, a sealed
		// history is checked for what the format adds in every commit: keys,
		// messages, and each size header against its padded frame.
		sealed, err := v.sealedProblems(ctx, mustHead(v.repo))
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && len(problems) == 0:
			out = append(out, fmt.Sprintf("the sealed history could not be checked: %v", err))
		}
		out = append(out, sealed...)
	}
	unsigned, err := v.unsignedCommits(ctx, mustHead(v.repo))
	if err != nil {
		return nil, err
	}
	out = append(out, unsigned...)
	out = append(out, v.checkHead(heads)...)
	return append(out, v.checkIdentityFile()...), nil
}

// checkHead decrypts every current memory file and parses the vault's own files.
func (v *Vault) checkHead(heads []gitlog.Entry) []string {
	var out []string
	snap, err := v.snapshotAt(mustHead(v.repo))
	if err != nil {
		return []string{err.Error()}
	}
	if e, err := v.repo.Lookup(snap.root, recipientsPath); err != nil {
		out = append(out, recipientsPath+" is missing")
	} else if content, err := v.repo.ReadBlob(e.Hash); err != nil {
		out = append(out, fmt.Sprintf("%s is unreadable: %v", recipientsPath, err))
	} else if _, err := v.keys.parseRecipients(content); err != nil {
		out = append(out, err.Error())
	}
	want := snap.names.format()
	if e, err := v.repo.Lookup(snap.root, formatPath); err != nil {
		out = append(out, formatPath+" is missing")
	} else if b, _ := v.repo.ReadBlob(e.Hash); strings.TrimSpace(string(b)) != want {
		out = append(out, fmt.Sprintf("%s says %q; this memvault reads format %s", formatPath, strings.TrimSpace(string(b)), want))
	}
	for _, e := range heads {
		if snap.names.key() != nil {
			// A name that does not open, or a blob whose headers do not, has
			// a line of its own above, from the sealed history's check.
			p, err := snap.names.memPath(e.Name)
			if err != nil {
				continue
			}
			if _, err = v.readBlobAt(p, e.Hash, snap.root); errors.Is(err, ErrNoIdentity) || errors.Is(err, ErrPassphrase) {
				return append(out, err.Error()+"; memory files were not decrypted")
			} else if err != nil {
				out = append(out, err.Error())
			}
			continue
		}
		p := Root + strings.TrimPrefix(e.Name, memDir)
		ct, err := v.readCiphertext(p, e.Hash)
		if errors.Is(err, ErrBadEntry) {
			continue // a line of its own above, from the history's check
		}
		if err == nil {
			_, err = v.keys.decrypt(p, ct)
		}
		if errors.Is(err, ErrNoIdentity) || errors.Is(err, ErrPassphrase) {
			return append(out, err.Error()+"; memory files were not decrypted")
		}
		if err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

func (v *Vault) checkIdentityFile() []string {
	return keys.IdentityWarnings(v.opts.IdentityFile) // a missing file: reported by the decryption check, if it mattered
}

func mustHead(r *gitlog.Repo) gitlog.Hash {
	h, _ := r.Head()
	return h
}

// RepairAt points the main branch of the vault at dir to the newest commit whose
// whole history is sound, when main is unreadable or names a broken commit, as a
// vault that Open refuses with ErrDamaged. It deletes nothing. It returns the
// commit chosen, or "" when main was sound.
func RepairAt(ctx context.Context, dir string) (string, error) {
	repo, err := gitlog.Open(dir)
	if err != nil {
		return "", fmt.Errorf("vault: repair %s: %w", dir, err)
	}
	defer repo.Close()
	w, err := repo.Lock(ctx)
	if err != nil {
		return "", fmt.Errorf("vault: repair: %w", err)
	}
	defer w.Unlock()
	h, err := w.Repair(ctx)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// PackResult is what Pack did: how many objects it moved into packs, and the
// bytes of the vault's objects before and after.
type PackResult struct {
	Objects       int
	Before, After int64
}

// Pack moves the objects of the vault's journal and any loose objects into
// pack files, merges the packs into one with trees stored as deltas, and says
// what it did. Nothing leaves the history, and writers are not held off (see
// gitlog.Repo.Pack).
func (v *Vault) Pack(ctx context.Context) (PackResult, error) {
	res, err := v.repo.Pack(ctx)
	out := PackResult{Objects: res.Objects, Before: res.Before, After: res.After}
	if err != nil {
		return out, fmt.Errorf("vault: %w", err)
	}
	return out, nil
}

// Flush puts the newest commits' objects, which a running process keeps in the
// vault's journal for a moment, into a pack, so that plain git (git log, git
// clone of the folder) finds them while the vault stays open. Closing the vault,
// or a pause of a few seconds in writing, does it too.
func (v *Vault) Flush(ctx context.Context) error {
	if err := v.repo.Flush(ctx); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}
