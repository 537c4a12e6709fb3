package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// diffOptions are the arguments of `memvault diff`.
type diffOptions struct {
	from, to string
	path     string // canonical memory path, or "" for all
	json     bool
}

func newDiffCommand(g *globalOptions) *cobra.Command {
	opts := diffOptions{from: "main~1", to: "main"}
	c := &cobra.Command{
		Use:   "diff [REV1 [REV2]] [-- PATH]",
		Short: "Show the decrypted changes between two revisions",
		Long: `Diff prints the changes of the memory files' decrypted content from REV1 to REV2 as
unified diffs: with no revision, what the last commit changed (main~1 to main); with
one, from it to main. After --, a PATH (a file or a directory, "/"-less paths are
under /memories) limits the diff to what is there.

` + revisionHelp + `

The diff is coloured on a terminal, plain when piped or when NO_COLOR is set. With
--json, one JSON object a changed file: {path, new_path, status, diff}.`,
		Example: `  memvault diff
  memvault diff before-cleanup main
  memvault diff main~5 -- /memories/notes`,
		Args: usageArgs(cobra.MaximumNArgs(3)),
		RunE: func(c *cobra.Command, args []string) error {
			revs, rest := args, []string(nil)
			if dash := c.ArgsLenAtDash(); dash >= 0 {
				revs, rest = args[:dash], args[dash:]
			}
			if len(revs) > 2 || len(rest) > 1 {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("want at most two revisions, then -- and one path")}
			}
			if len(revs) > 0 {
				opts.from = revs[0]
			}
			if len(revs) > 1 {
				opts.to = revs[1]
			}
			if len(rest) == 1 {
				p, err := memoryPath(c, rest[0])
				if err != nil {
					return err
				}
				opts.path = p
			}
			return runDiff(c.Context(), g, opts, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&opts.json, "json", false, "print one JSON object a changed file")
	return c
}

func runDiff(ctx context.Context, g *globalOptions, opts diffOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	files, err := v.Diff(ctx, opts.from, opts.to, opts.path)
	if err != nil {
		return err
	}
	if opts.json {
		for _, f := range files {
			if err := writeRecordJSON(out, "diff", f); err != nil {
				return err
			}
		}
		return nil
	}
	return writeDiffs(out, files, stylesFor(out))
}
