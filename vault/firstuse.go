package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/vault/internal/durable"
	"github.com/memvault/memvault/vault/keys"
)

// OpenOrInit opens the vault at dir, first creating it as Init does (with the
// identity, if there is none) when dir does not exist yet or is an empty
// folder: the first use of a face (a tool call, a server) needs no separate
// init. initResult says what was created.
//
// Anything else at dir is never re-created: a vault that cannot be opened
// returns Open's error (wrapping ErrDamaged, or ErrNotVault for a folder that
// holds something other than a vault), and an identity file that exists but
// cannot be read returns an error wrapping ErrNoIdentity or ErrPassphrase,
// the file left as it is.
//
// The vault is made in a folder beside dir and renamed into place, so a
// process starting on dir at the same moment sees no vault or a whole one;
// when another process creates it first, OpenOrInit opens the one it made.
func OpenOrInit(ctx context.Context, dir string, opts Options) (*Vault, InitResult, error) {
	var res InitResult
	if err := opts.fill(); err != nil {
		return nil, res, err
	}
	if err := notAFolder(dir); err != nil {
		return nil, res, err
	}
	fresh, err := absentOrEmpty(dir)
	if err != nil {
		return nil, res, fmt.Errorf("vault: open %s: %w", dir, err)
	}
	if !fresh {
		v, err := Open(ctx, dir, opts)
		return v, res, err
	}
	recipient, created, err := keys.LoadOrCreate(opts.IdentityFile, opts.Passphrase)
	if errors.Is(err, ErrExist) { // another process made it a moment ago
		recipient, created, err = keys.LoadOrCreate(opts.IdentityFile, opts.Passphrase)
	}
	if err != nil {
		return nil, res, err
	}
	res.IdentityCreated, res.Recipient = created, recipient
	if res.VaultCreated, err = initBeside(ctx, dir, opts); err != nil {
		return nil, res, err
	}
	v, err := Open(ctx, dir, opts)
	if err != nil {
		return nil, res, err
	}
	res.NotRecipient = !v.hasRecipient(ctx, recipient)
	return v, res, nil
}

// initBeside creates a vault in a new folder beside dir and renames it to dir,
// reporting whether it did. When dir is taken meanwhile by another process's
// vault it leaves that one; where a folder cannot be renamed over an empty one
// (a mount point, Windows) it creates the vault in place.
func initBeside(ctx context.Context, dir string, opts Options) (bool, error) {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return false, fmt.Errorf("vault: init %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return false, fmt.Errorf("vault: init %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	v, _, err := Init(ctx, tmp, opts)
	if err != nil {
		return false, err
	}
	if err := v.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dir); err == nil {
		if err := durable.SyncDir(parent); err != nil {
			return false, fmt.Errorf("vault: init %s: %w", dir, err)
		}
		return true, nil
	}
	if fresh, err := absentOrEmpty(dir); err == nil && fresh {
		v, res, err := Init(ctx, dir, opts)
		if err != nil {
			return false, err
		}
		return res.VaultCreated, v.Close()
	}
	return false, nil // another process's vault is there; Open says whether it is whole
}

// absentOrEmpty tells whether dir does not exist or is an empty folder.
// notAFolder is the error for a vault path that names something other than
// a folder (a regular file, most likely a path given by mistake): it wraps
// ErrNotVault and says what is there, where reading it as a folder would say
// only "not a directory". Nil for a folder, or for nothing at all.
func notAFolder(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil || fi.IsDir() {
		return nil
	}
	what := "a file"
	if !fi.Mode().IsRegular() {
		what = "not a folder"
	}
	return fmt.Errorf("vault: open %s: %s, not a vault (a vault is a folder): %w", dir, what, ErrNotVault)
}

func absentOrEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return false, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return true, nil
}

// Unlock reads the vault's identity now, asking for its passphrase if it has
// one, instead of at the first decryption: a long-lived process learns as it
// starts whether it can read the vault. The identity is kept for the vault's
// later reads, so the passphrase is not asked for again. The error wraps
// ErrNoIdentity or ErrPassphrase.
func (v *Vault) Unlock() error {
	_, err := v.keys.identity()
	return err
}
