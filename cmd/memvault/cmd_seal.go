package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

func newSealCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "seal",
		Short: "Convert the vault to the sealed format (format 3), which hides names from the git host",
		Long: `Seal converts a vault of the plain format to the sealed format, in one commit.

From that commit on, what a git host (or anyone with a copy of the repository) sees
is ciphertext only: no file or folder name, no commit subject, tool-use id, agent or
session, and no exact file size (sizes are padded to a bucket). memvault itself shows
everything as before.

History is never rewritten: the commits before the conversion keep their names, their
messages and their exact sizes, in the clear to the host, as they are already on any
remote the vault was pushed to; checkpoints made before keep their names too. Only
what is written from the conversion on is sealed.

Every current memory file is decrypted in memory and encrypted again, padded, to the
same recipients; nothing decrypted is written to disk. If the conversion is
interrupted the vault stays as it was, and running seal again goes on from where it
stopped. A vault that is sealed already is left as it is.

A vault sealed by an older memvault (format 2, without key generations) is sealed
again by seal under a generation of the vault key (format 3), in one commit, to the
same members: a member added afterwards then reads its whole history's names and
messages, and every content from then on. A change of members does the same on the
way.

Other clones follow with their next sync: a clone with no changes of its own
fast-forwards to the conversion; one with plain commits of its own merges them, sealed,
in one commit on top of the conversion, so that those commits stay on that clone and
never reach the host.`,
		Example: `  memvault seal
  memvault sync`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runSeal(c.Context(), g, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
}

func runSeal(ctx context.Context, g *globalOptions, out, errOut io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	bar := newProgressBar(errOut)
	bar.label = "sealing"
	res, err := v.Seal(ctx, vault.Meta{Agent: "memvault"}, vault.SealOptions{Progress: bar.update})
	bar.done()
	switch {
	case errors.Is(err, vault.ErrSealed):
		fmt.Fprintln(out, "the vault is sealed already: nothing to do")
		return nil
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(errOut, "memvault: the vault is as it was; run seal again to go on from where it stopped")
		return err
	case err != nil:
		return err
	}
	resumed := ""
	if res.Resumed > 0 {
		resumed = fmt.Sprintf(", %d of them done by the interrupted run before", res.Resumed)
	}
	files := "files"
	if res.Files == 1 {
		files = "file"
	}
	fmt.Fprintf(out, "sealed %d memory %s in commit %s%s\n", res.Files, files, res.Commit[:12], resumed)
	fmt.Fprintln(out, "\nFrom this commit on the git host sees no name, message or exact size. The history")
	fmt.Fprintln(out, "before it is not rewritten and keeps its names. Other clones follow with a sync.")
	return nil
}
