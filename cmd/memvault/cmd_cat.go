package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

func newCatCommand(g *globalOptions) *cobra.Command {
	var at string
	c := &cobra.Command{
		Use:   "cat PATH [--at REV]",
		Short: "Print the plaintext of one memory file",
		Long: `Cat decrypts one memory file of the vault's current state and prints it exactly,
adding nothing (not even a final newline the file does not have). On a terminal,
control characters other than newline and tab, and bidi controls, are shown
escaped (\x1b, \u202e), since the file may be someone else's; piped or redirected,
the bytes are exact.

PATH is a memory path such as /memories/notes/todo.md. A path that does not start
with "/" is taken under /memories, so notes/todo.md is the same file. A missing file
or a directory exits with status 1.

With --at, the file as it was at revision REV: a commit hash (or at least its first 4
digits), main, a checkpoint name, or any of these followed by ~N (N commits before);
or main@{DATE}, what main held at DATE by this vault's record of when its main moved
(2026-11-24, 2026-11-24T10:00:00Z, or an age such as 3h or 2d), never by commit
dates.`,
		Example: `  memvault cat /memories/user_profile.md
  memvault cat notes/todo.md
  memvault cat notes/todo.md --at main~3
  memvault cat notes/todo.md --at main@{2d}`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := memoryPath(c, args[0])
			if err != nil {
				return err
			}
			return runCat(c.Context(), g, p, at, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&at, "at", "", "read the file as it was at revision `REV`")
	return c
}

func runCat(ctx context.Context, g *globalOptions, p, at string, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	snap, err := v.Snapshot(ctx)
	name := p // for messages
	if at != "" {
		snap, err = v.SnapshotAt(ctx, at)
		name += " at " + at
	}
	if err != nil {
		return err
	}
	data, err := snap.ReadFile(ctx, p)
	switch {
	case errors.Is(err, vault.ErrIsDir):
		return fmt.Errorf("cat %s: %w", name, errMemoryDir)
	case errors.Is(err, vault.ErrNotExist) && !errors.Is(err, vault.ErrNoIdentity):
		return fmt.Errorf("cat %s: %w ('memvault log %s' lists the commits that changed it)", name, errNoMemory, p)
	case err != nil:
		return err
	}
	if isTerminal(out) {
		// The file may be a collaborator's: a terminal gets its controls escaped.
		data = []byte(escape.Text(string(data)))
	}
	if _, err := out.Write(data); err != nil {
		return fmt.Errorf("cat: write: %w", err)
	}
	return nil
}
