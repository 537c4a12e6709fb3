package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/vault/internal/textdiff"
)

// WriteEdit commits edited as the content of the memory file p, as one change
// (Command "edit" unless meta says otherwise): a person's edit of a file that
// held base when the edit began. When p changed meanwhile, the two changes are
// merged by lines, as sync merges them; when they touch the same or adjacent
// lines nothing is committed, the error wraps ErrConflict and merged holds
// both versions between conflict markers, for the person to settle and write
// again with merged as the new base's edit (the error quotes no content).
// A file deleted meanwhile is written again: the edit is the later intent.
// Nothing is committed when edited is what p holds. Other errors are
// Tx.WriteFile's.
func (v *Vault) WriteEdit(ctx context.Context, meta Meta, p string, base, edited []byte) (merged []byte, err error) {
	if meta.Command == "" {
		meta.Command = "edit"
	}
	err = v.Update(ctx, meta, func(tx *Tx) error {
		cur, err := tx.ReadFile(ctx, p)
		switch {
		case errors.Is(err, ErrNotExist):
			return tx.WriteFile(ctx, p, edited)
		case err != nil:
			return err
		case bytes.Equal(cur, edited):
			return nil
		case bytes.Equal(cur, base):
			return tx.WriteFile(ctx, p, edited)
		}
		m, n := textdiff.Merge(base, edited, cur, textdiff.Labels{Ours: "your edit", Theirs: "changed meanwhile"})
		if n > 0 {
			merged = m
			return fmt.Errorf("vault: edit %s: the file changed meanwhile in the same or adjacent lines: %w", p, ErrConflict)
		}
		return tx.WriteFile(ctx, p, m)
	})
	return merged, err
}
