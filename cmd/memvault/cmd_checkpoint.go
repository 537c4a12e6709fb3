package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

func newCheckpointCommand(g *globalOptions) *cobra.Command {
	var msg string
	var asJSON bool
	c := &cobra.Command{
		Use:   "checkpoint NAME [REV] [-m MSG]",
		Short: "Name a point in the history, to come back to",
		Long: `Checkpoint names the revision REV (default: main, the current state) NAME, with a
message. A checkpoint is an annotated git tag: it is never moved, it travels with the
vault to its clones, and NAME works wherever a revision does ('memvault rollback NAME',
'memvault diff NAME main'). NAME follows git's rules for tags: no spaces, no "..", no
~^:?*[\ characters.

` + revisionHelp,
		Example: `  memvault checkpoint before-cleanup -m "before letting the agent reorganise notes"
  memvault checkpoint last-good main~3`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, args []string) error {
			rev := "main"
			if len(args) == 2 {
				rev = args[1]
			}
			err := runCheckpoint(c.Context(), g, args[0], rev, msg, asJSON, c.OutOrStdout())
			switch {
			case errors.Is(err, vault.ErrInvalid):
				return &usageError{cmd: c.CommandPath(), err: err}
			case errors.Is(err, vault.ErrExist):
				return &hintedError{err: err, hint: "Choose another name; 'memvault checkpoints' lists the names taken."}
			}
			return err
		},
	}
	c.Flags().StringVarP(&msg, "message", "m", "", "what the checkpoint is, its `MSG`")
	c.Flags().BoolVar(&asJSON, "json", false, "print the checkpoint as one JSON object")
	return c
}

func runCheckpoint(ctx context.Context, g *globalOptions, name, rev, msg string, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	cp, err := v.Checkpoint(ctx, name, rev, msg)
	if err != nil {
		return err
	}
	if asJSON {
		return writeRecordJSON(out, "checkpoint", cp)
	}
	_, err = fmt.Fprintf(out, "checkpoint %s at %s\n", escape.Name(cp.Name), stylesFor(out).yellow(shortHash(cp.Commit)))
	return err
}

func newCheckpointsCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "checkpoints",
		Short: "List the checkpoints, oldest first",
		Long: `Checkpoints lists the vault's checkpoints, oldest first: the name, the commit it
names, when it was made and the first line of its message. With --json, one JSON
object a checkpoint: {name, commit, time, message}.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runCheckpoints(c.Context(), g, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line")
	return c
}

func runCheckpoints(ctx context.Context, g *globalOptions, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	cps, err := v.Checkpoints(ctx)
	if err != nil {
		return err
	}
	st := stylesFor(out)
	for _, cp := range cps {
		if asJSON {
			if err := writeRecordJSON(out, "checkpoints", cp); err != nil {
				return err
			}
			continue
		}
		subject, _, _ := strings.Cut(cp.Message, "\n")
		if _, err := fmt.Fprintf(out, "%s  %s  %s  %s\n", st.bold(escape.Name(cp.Name)), st.yellow(shortHash(cp.Commit)),
			cp.Time.Local().Format("2006-01-02 15:04:05"), escape.Name(subject)); err != nil {
			return fmt.Errorf("checkpoints: write: %w", err)
		}
	}
	return nil
}
