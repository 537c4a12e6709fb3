package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

func newCatCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH",
		Short: "Print the plaintext of one memory file",
		Long: `Cat decrypts one memory file of the vault's current state and prints it exactly,
adding nothing (not even a final newline the file does not have).

PATH is a memory path such as /memories/notes/todo.md. A path that does not start
with "/" is taken under /memories, so notes/todo.md is the same file. A missing file
or a directory exits with status 1.`,
		Example: `  memvault cat /memories/user_profile.md
  memvault cat notes/todo.md`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := memoryPath(c, args[0])
			if err != nil {
				return err
			}
			return runCat(c.Context(), g, p, c.OutOrStdout())
		},
	}
}

func runCat(ctx context.Context, g *globalOptions, p string, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return err
	}
	data, err := snap.ReadFile(ctx, p)
	switch {
	case errors.Is(err, vault.ErrIsDir):
		return fmt.Errorf("cat %s: %w", p, errMemoryDir)
	case errors.Is(err, vault.ErrNotExist) && !errors.Is(err, vault.ErrNoIdentity):
		return fmt.Errorf("cat %s: %w", p, errNoMemory)
	case err != nil:
		return err
	}
	if _, err := out.Write(data); err != nil {
		return fmt.Errorf("cat: write: %w", err)
	}
	return nil
}
