package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func newGCCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "Pack the vault's objects now",
		Long: `Gc moves the objects that a running memvault keeps in the vault's journal, and any
loose objects (git, or an older memvault, writes a few small files per commit), into one
pack file and its index, synced before anything is removed, then merges the packs into
one, storing trees as deltas of one another as git does, and says how many bytes that
saved. Nothing leaves the history: every commit and every version stays.

memvault does this by itself: the journal goes into a pack every few megabytes, after a
pause in writing and when the process ends, and packs are merged as they accumulate
("git --git-dir=VAULT config gc.auto 0" turns merging off), so gc is for a manual run.
Agents may keep writing meanwhile: what they write goes into the next pack.
If another process is packing, gc waits for it.`,
		Example: `  memvault gc`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runGC(c.Context(), g, c.OutOrStdout())
		},
	}
}

func runGC(ctx context.Context, g *globalOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	res, err := v.Pack(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, gcSummary(res.Objects, res.Before, res.After))
	return nil
}

// gcSummary says what gc did: the loose objects it packed, if any, and what
// merging every pack into one made of the objects' size. It once said
// "nothing to pack" and then, on the next line, how much it saved.
func gcSummary(loose int, before, after int64) string {
	what := "merged the packs into one"
	switch loose {
	case 0:
	case 1:
		what = "packed 1 loose object and merged the packs into one"
	default:
		what = fmt.Sprintf("packed %d loose objects and merged the packs into one", loose)
	}
	switch {
	case after < before:
		return fmt.Sprintf("%s: the objects take %s, from %s (%s saved)", what, byteSize(after), byteSize(before), byteSize(before-after))
	case after > before:
		return fmt.Sprintf("%s: the objects take %s, from %s (%s more)", what, byteSize(after), byteSize(before), byteSize(after-before))
	case loose == 0:
		return fmt.Sprintf("nothing to do: the objects are in one pack already (%s)", byteSize(after))
	}
	return fmt.Sprintf("%s: the objects take %s, as before", what, byteSize(after))
}

// byteSize is n bytes for a person: 512 bytes, 3.4 KiB, 13.4 MiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
