package agent

import (
	"context"

	"github.com/memvault/memvault/vault"
)

// checkQuota fails a write of size bytes to file p that would take the vault
// over its limit on files or on total size. A write that adds no file and no
// bytes always passes, so the model can always shrink or delete its way back
// under a limit lowered in the config.
func checkQuota(ctx context.Context, tx *vault.Tx, p string, size int64, limits vault.Limits) error {
	if limits.MaxFiles <= 0 && limits.MaxVaultSize <= 0 {
		return nil
	}
	kind, err := tx.Stat(p)
	if err != nil {
		return err
	}
	var addFiles int
	var addBytes int64 = size
	if kind == vault.KindFile && limits.MaxVaultSize > 0 {
		old, err := tx.ReadFile(ctx, p) // already decrypted by the command: a cache hit
		if err != nil {
			return err
		}
		addBytes -= int64(len(old))
	} else if kind != vault.KindFile {
		addFiles = 1
	}
	if addFiles == 0 && addBytes <= 0 {
		return nil
	}
	if limits.MaxFiles > 0 && addFiles > 0 {
		n, err := tx.FileCount(ctx)
		if err != nil {
			return err
		}
		if n+addFiles > limits.MaxFiles {
			return fail("Cannot create %s: the memory directory would hold %d files, over the limit of %d files. "+
				"Delete memory files you no longer need, or merge small ones, then try again.", p, n+addFiles, limits.MaxFiles)
		}
	}
	if limits.MaxVaultSize > 0 && addBytes > 0 {
		u, err := tx.Usage(ctx)
		if err != nil {
			return err
		}
		if n := u.Bytes + addBytes; n > limits.MaxVaultSize {
			return fail("Cannot write %s: the memory directory would hold %d bytes, over the limit of %d bytes. "+
				"Delete or shorten memory files you no longer need, then try again.", p, n, limits.MaxVaultSize)
		}
	}
	return nil
}
