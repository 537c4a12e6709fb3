package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

// logOptions are the flags of `memvault log`.
type logOptions struct {
	path  string // canonical memory path, or "" for the whole vault
	limit int
	json  bool
}

func newLogCommand(g *globalOptions) *cobra.Command {
	var opts logOptions
	c := &cobra.Command{
		Use:   "log [PATH]",
		Short: "Show the vault's history, newest first",
		Long: `Log lists the commits of the vault, newest first: one line each with the short
commit hash, the time, the memory command, its path(s) and the tool-use id that made it.
With PATH, only the commits that changed that file or directory (a path that does not
start with "/" is taken under /memories). Log reads no file contents and needs no identity.

With --json, each commit is one JSON object on its own line, with the fields commit,
parents, time (RFC 3339), author, command, path, new_path, tool_use_id, agent, session
and subject.`,
		Example: `  memvault log
  memvault log -n 5 /memories/progress.md
  memvault log --json | jq -r 'select(.tool_use_id != "") | .tool_use_id'`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.limit < 0 {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("-n %d: want 0 (all) or more", opts.limit)}
			}
			if len(args) == 1 {
				p, err := memoryPath(c, args[0])
				if err != nil {
					return err
				}
				opts.path = p
			}
			return runLog(c.Context(), g, opts, c.OutOrStdout())
		},
	}
	c.Flags().IntVarP(&opts.limit, "max-count", "n", 0, "show at most `N` commits (0: all)")
	c.Flags().BoolVar(&opts.json, "json", false, "print one JSON object a line")
	return c
}

func runLog(ctx context.Context, g *globalOptions, opts logOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	recs, err := v.Log(ctx, vault.LogOptions{Path: opts.path, Limit: opts.limit})
	if err != nil {
		return err
	}
	if opts.json {
		return writeLogJSON(out, recs)
	}
	return writeLogText(out, recs, stylesFor(out))
}

// writeLogJSON writes one JSON object a line. A root commit's parents are [], not null.
func writeLogJSON(out io.Writer, recs []vault.Record) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if r.Parents == nil {
			r.Parents = []string{}
		}
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("log: write: %w", err)
		}
	}
	return nil
}

// writeLogText writes one readable line a commit:
// short hash, local time, command, path(s), tool-use id.
func writeLogText(out io.Writer, recs []vault.Record, st styles) error {
	for _, r := range recs {
		what := r.Subject
		if r.Command != "" {
			what = fmt.Sprintf("%-11s  %s", r.Command, r.Path)
			if r.NewPath != "" {
				what += " -> " + r.NewPath
			}
		}
		line := fmt.Sprintf("%s  %s  %s", st.yellow(shortHash(r.Commit)),
			r.Time.Local().Format("2006-01-02 15:04:05"), what)
		if r.ToolUseID != "" {
			line += "  " + st.dim(r.ToolUseID)
		}
		if _, err := fmt.Fprintln(out, strings.TrimRight(line, " ")); err != nil {
			return fmt.Errorf("log: write: %w", err)
		}
	}
	return nil
}

func shortHash(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
