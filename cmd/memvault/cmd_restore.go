package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

// undoMeta names who made an undo commit from the command line.
var undoMeta = vault.Meta{Agent: "memvault"}

func newRestoreCommand(g *globalOptions) *cobra.Command {
	var at string
	var asJSON bool
	c := &cobra.Command{
		Use:   "restore PATH --at REV",
		Short: "Put a memory file or directory back as it was at a revision",
		Long: `Restore makes the memory file or directory at PATH what it was at revision REV, as one
new commit (Memory-Command: restore, Memory-Source: the commit of REV); a directory
gets exactly its files of then. History is not rewritten: the restore is itself a
commit, which restore, revert or rollback can undo in turn. When PATH is already as it
was, restore says so and commits nothing. A path that held nothing at REV exits with
status 1.

` + revisionHelp,
		Example: `  memvault restore /memories/user_profile.md --at main~3
  memvault restore notes --at before-cleanup`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := memoryPath(c, args[0])
			if err != nil {
				return err
			}
			if at == "" {
				return &usageError{cmd: c.CommandPath(), err: errors.New("--at REV is required: the revision to restore from")}
			}
			return runRestore(c.Context(), g, p, at, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&at, "at", "", "the revision `REV` to take the content from")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return c
}

func runRestore(ctx context.Context, g *globalOptions, p, at string, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	res, err := v.Restore(ctx, undoMeta, p, at)
	if errors.Is(err, vault.ErrNotExist) && !errors.Is(err, vault.ErrNoIdentity) {
		return fmt.Errorf("restore %s: nothing was there at %s ('memvault log %s' lists the commits that changed it): %w", p, at, p, errNoMemory)
	}
	if err != nil {
		return err
	}
	return writeUndoResult(out, "restore", "nothing to restore: "+p+" is as it was at "+at+" already; no commit made",
		res, asJSON, stylesFor(out))
}

func newRevertCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "revert REV",
		Short: "Undo one commit's changes, keeping everything since",
		Long: `Revert undoes what the commit REV did to the memory files, on top of the current
state, as one new commit (Memory-Command: revert, Memory-Source: that commit). Like
git revert, each file is merged by lines: changes made since, elsewhere in the file,
are kept. When a later change touched the same or adjacent lines, revert changes
nothing, names the files and exits with status 1; 'memvault restore PATH --at REV'
then takes a file back whole. When the changes are undone already, revert says so
and commits nothing.

` + revisionHelp,
		Example: `  memvault log -n 5
  memvault revert 3f2a1c9`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runUndo(c.Context(), g, "revert", args[0], asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return c
}

func newRollbackCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "rollback REV",
		Short: "Put all of /memories back as it was at a revision",
		Long: `Rollback makes every memory file what it was at revision REV, as one new commit
(Memory-Command: rollback, Memory-Source: the commit of REV): files written since are
removed, files deleted since come back. The vault's own files (its recipients) are
not rolled back. History is not rewritten: 'memvault rollback main~1' right after
undoes the rollback. When the memory is already as it was, rollback says so and
commits nothing.

` + revisionHelp,
		Example: `  memvault checkpoints
  memvault rollback before-cleanup`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runUndo(c.Context(), g, "rollback", args[0], asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return c
}

func runUndo(ctx context.Context, g *globalOptions, verb, rev string, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	undo, nothing := v.Revert, "nothing to revert: the changes of "+rev+" are undone already; no commit made"
	if verb == "rollback" {
		undo, nothing = v.Rollback, "nothing to roll back: /memories is as it was at "+rev+" already; no commit made"
	}
	res, err := undo(ctx, undoMeta, rev)
	if err != nil {
		return err
	}
	return writeUndoResult(out, verb, nothing, res, asJSON, stylesFor(out))
}
