package gitlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Every pack costs a reader a lookup in its index, so their number must stay
// small while the history grows, without rewriting the whole history each time.
// As git's `repack --geometric=2` does, consolidate merges the smallest packs
// until, from smallest to largest, each pack holds at least twice the objects
// of the one before: then there are at most about log2(objects / smallest)
// packs, and an object is rewritten only when the packs below it have grown to
// its size, a logarithmic number of times in all.

// packFile is one pack of the repository and how many objects it holds.
type packFile struct {
	base    string // path without ".pack"
	objects uint32
}

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
func (r *Repo) mergeAway(ctx context.Context, merge []packFile) error {
	out, err := r.mergePacks(ctx, merge)
	if err != nil {
		return err
	}
	// The pack goes before its index: a reader that lists packs meanwhile must
	// never find a pack without an index. A reader that still lists an old
	// pack fails to open it and looks again (see Repo.object). The merged pack
	// may carry the name of one it merged (see mergePacks): that one stays.
	for _, p := range merge {
		if p.base == out {
			continue
		}
		for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap"} {
			if err := r.disk.Remove(p.base + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("gitlog: pack: %w", err)
			}
		}
	}
	return nil
}

// geometricSplit returns the packs to merge, smallest first: none when the
// packs, sorted by size, already grow by a factor of two or more.
func geometricSplit(packs []packFile) []packFile {
	sort.Slice(packs, func(i, j int) bool { return packs[i].objects < packs[j].objects })
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if packs[i].objects < 2*packs[i-1].objects {
			split = i + 1
			break
		}
	}
	var total uint64
	for _, p := range packs[:split] {
		total += uint64(p.objects)
	}
	for split < len(packs) && uint64(packs[split].objects) < 2*total {
		total += uint64(packs[split].objects)
		split++
	}
	return packs[:split]
}

// listPacks lists the repository's packs that may be merged: a pack with a
// .keep file is left alone, as git does.
func (r *Repo) listPacks() ([]packFile, error) {
	names, err := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.pack"))
	if err != nil {
		return nil, err
	}
	var packs []packFile
	for _, name := range names {
		base := strings.TrimSuffix(name, ".pack")
		if _, err := os.Stat(base + ".keep"); err == nil {
			continue
		}
		n, err := packCount(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // merged away meanwhile by git gc
		}
		if err != nil {
			return nil, fmt.Errorf("gitlog: pack: %w", err)
		}
		packs = append(packs, packFile{base: base, objects: n})
	}
	return packs, nil
}

// packCount reads how many objects a pack holds from its header.
func packCount(name string) (uint32, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [12]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	if string(head[:4]) != "PACK" {
		return 0, fmt.Errorf("%s is not a pack", name)
	}
	return binary.BigEndian.Uint32(head[8:]), nil
}
