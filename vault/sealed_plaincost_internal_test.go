package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkPlainKeyLookup measures, on a plain vault of 5,000 files, what
// finding a tree's format costs a write: "lookup" is the look-up of
// .memvault/key in a tree not seen before, which every write paid for the
// tree it made until a commit passed its parent's answer on; "inherited" is
// what it pays now; "write" is a whole write, for scale, in the same run.
//
//	go test ./vault -run '^$' -bench BenchmarkPlainKeyLookup -count 5
func BenchmarkPlainKeyLookup(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	// Plain: what it measures is the plain format's lookup of a key it has not.
	v, _, err := Init(ctx, filepath.Join(dir, "v.git"), Options{IdentityFile: filepath.Join(dir, "id"), Plain: true})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	err = v.Update(ctx, Meta{Command: "import"}, func(tx *Tx) error {
		for i := range 5000 {
			if err := tx.WriteFile(ctx, fmt.Sprintf("/memories/d%03d/f%04d.md", i/100, i), []byte("x\n")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	s, err := v.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lookup", func(b *testing.B) {
		for b.Loop() {
			v.seals.mu.Lock()
			delete(v.seals.byRoot, s.root)
			v.seals.mu.Unlock()
			if k, err := v.sealKeyAt(s.root); err != nil || k != nil {
				b.Fatal(k, err)
			}
		}
	})
	b.Run("inherited", func(b *testing.B) {
		for b.Loop() {
			if k, err := v.sealKeyAt(s.root); err != nil || k != nil {
				b.Fatal(k, err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			err := v.Update(ctx, Meta{Command: "create"}, func(tx *Tx) error {
				return tx.WriteFile(ctx, fmt.Sprintf("/memories/d%03d/f%04d.md", i%50, i%5000), []byte(fmt.Sprint(i)))
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
