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
		Short: "Pack the vault's loose objects now",
		Long: `Gc moves the vault's loose objects (every commit writes a few small files) into one
pack file and its index, synced before any loose file is removed, then merges small packs
into bigger ones. Nothing leaves the history: every commit and every version stays.

Commits do this by themselves once the loose objects pass the vault's gc.auto (6,700 by
default; "git --git-dir=VAULT config gc.auto 0" turns it off), so gc is for a manual run.
Agents may keep writing meanwhile: what they write stays loose until the next packing.
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
		fmt.Fprintln(out, "nothing to pack: no loose objects")
		return nil
	}
	fmt.Fprintf(out, "packed %d loose objects into one pack\n", n)
	return nil
}
