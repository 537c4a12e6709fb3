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
pack file and its index, synced before anything is removed, then merges small packs into
bigger ones. Nothing leaves the history: every commit and every version stays.

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
	n, err := v.Pack(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(out, "nothing to pack: every object is in a pack")
		return nil
	}
	if n == 1 {
		fmt.Fprintln(out, "packed 1 object into one pack")
		return nil
	}
	fmt.Fprintf(out, "packed %d objects into one pack\n", n)
	return nil
}
