package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/memvault/memvault/gitlog/internal/pack"
)

// Every pack costs a reader a lookup in its index, so their number must stay
// small while the history grows, without rewriting the whole history each time.
// As git's `repack --geometric=2` does, consolidate merges the smallest packs
// until, from smallest to largest, each pack holds at least twice the objects
// of the one before: then there are at most about log2(objects / smallest)
// packs, and an object is rewritten only when the packs below it have grown to
// its size, a logarithmic number of times in all.

// consolidate merges the smallest packs into one, as described above. The
// caller holds the pack lock.
func (r *Repo) consolidate(ctx context.Context) error {
	packs, err := r.listPacks()
	if err != nil {
		return err
	}
	merge := geometricSplit(packs)
	if len(merge) < 2 {
		return nil
	}
	return r.mergeAway(ctx, merge)
}

// packsOver tells whether the repository has more than n packs (n ≤ 0: true).
func (r *Repo) packsOver(n int) bool {
	if n <= 0 {
		return true
	}
	names, err := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.pack"))
	return err != nil || len(names) > n
}

// mergeAway merges packs into one and removes them. The caller holds the pack
// lock.
func (r *Repo) mergeAway(ctx context.Context, merge []pack.File) error {
	out, err := r.mergePacks(ctx, merge)
	if err != nil {
		return err
	}
	// The pack goes before its index: a reader that lists packs meanwhile must
	// never find a pack without an index. A reader that still lists an old
	// pack fails to open it and looks again (see Repo.object). The merged pack
	// may carry the name of one it merged (see mergePacks): that one stays.
	for _, p := range merge {
		if p.Base == out {
			continue
		}
		for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap"} {
			if err := r.disk.Remove(p.Base + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("gitlog: pack: %w", err)
			}
		}
	}
	return nil
}

// geometricSplit returns the packs to merge, smallest first: none when the
// packs, sorted by size, already grow by a factor of two or more.
func geometricSplit(packs []pack.File) []pack.File {
	sort.Slice(packs, func(i, j int) bool { return packs[i].Objects < packs[j].Objects })
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if packs[i].Objects < 2*packs[i-1].Objects {
			split = i + 1
			break
		}
	}
	var total uint64
	for _, p := range packs[:split] {
		total += uint64(p.Objects)
	}
	for split < len(packs) && uint64(packs[split].Objects) < 2*total {
		total += uint64(packs[split].Objects)
		split++
	}
	return packs[:split]
}

// listPacks lists the repository's packs that may be merged (see pack.List).
func (r *Repo) listPacks() ([]pack.File, error) {
	return pack.List(filepath.Join(r.dir, "objects", "pack"))
}
