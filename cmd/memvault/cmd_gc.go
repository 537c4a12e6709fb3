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
	switch res.Objects {
	case 0:
		fmt.Fprintln(out, "nothing to pack: every object is in a pack")
	case 1:
		fmt.Fprintln(out, "packed 1 object into one pack")
	default:
		fmt.Fprintf(out, "packed %d objects into one pack\n", res.Objects)
	}
	switch {
	case res.After < res.Before:
		fmt.Fprintf(out, "objects: %s, from %s: %s saved\n", byteSize(res.After), byteSize(res.Before), byteSize(res.Before-res.After))
	case res.After > res.Before:
		fmt.Fprintf(out, "objects: %s, from %s: %s more\n", byteSize(res.After), byteSize(res.Before), byteSize(res.After-res.Before))
	}
	return nil
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
