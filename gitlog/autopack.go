package gitlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Commits go into packs through the journal (see flushJournal), one pack each
// few megabytes, and those packs must be merged as they accumulate; loose objects
// that git or an older memvault wrote must be packed too. As git's gc.auto does,
// each flush samples the 256 fan-out folders (see looseEstimate), and when they
// hold more than their share of the threshold, the process packs in the
// background (see Pack): writers and readers go on meanwhile, a
// second packer skips, a long merge of packs does not hold up the next packing
// of loose objects, and Close waits for a running pack so a short-lived
// process does not leave one half done (were it killed, the next pack removes
// what it left). The threshold is the vault's git config gc.auto, 6,700 by
// default as in git; 0 turns automatic packing off.

// defaultAutoPack is the number of loose objects past which a flush of the
// journal starts packing in the background (see maybeAutoPack), unless the
// repository's config sets gc.auto. A commit itself never packs.
const defaultAutoPack = 6700

// autoPackLimit reads gc.auto from the repository's config.
func (r *Repo) autoPackLimit() int {
	cfg, err := r.st.Config()
	if err != nil {
		return defaultAutoPack
	}
	s := cfg.Raw.Section("gc")
	if !s.HasOption("auto") {
		return defaultAutoPack
	}
	n, err := strconv.Atoi(s.Option("auto"))
	if err != nil || n < 0 {
		return defaultAutoPack
	}
	return n
}

// maybeAutoPack runs after a flush of the journal has added a pack: in the
// background, it packs the loose objects when they seem to pass the threshold
// (commits write none, but git, an older memvault or a replay may have), and
// merges packs geometrically (see consolidate). At the default the check costs
// three small folder listings.
func (r *Repo) maybeAutoPack() {
	if r.autoPack <= 0 {
		return
	}
	loose := r.looseEstimate() > r.autoPack
	if !r.packing.CompareAndSwap(false, true) {
		return // this process packs already
	}
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		ctx := context.Background()
		// Best effort: the next flush tries again.
		var err error
		if loose {
			_, err = r.packLoosePhase(ctx, false)
		}
		r.packing.Store(false)
		if err != nil || !r.merging.CompareAndSwap(false, true) {
			return
		}
		defer r.merging.Store(false)
		if unlock, ok, _ := r.packLock(ctx, "pack-merge.lock", false); ok {
			r.consolidate(ctx)
			unlock()
		}
	}()
}

// looseEstimate estimates the loose objects from a sample of the 256 fan-out
// folders, as git's gc.auto does with one. Object names are uniform, so a
// folder holds a 256th of them; the sample is large enough to expect about 64
// objects at the threshold, so that a low threshold is not decided by chance.
func (r *Repo) looseEstimate() int {
	k := min(256, max(1, (256*64+r.autoPack-1)/r.autoPack))
	n := 0
	for i := range k {
		es, _ := os.ReadDir(filepath.Join(r.dir, "objects", fmt.Sprintf("%02x", (0x17+i)%256)))
		n += len(es)
	}
	return n * 256 / k
}
