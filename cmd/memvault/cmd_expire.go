package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault/escape"
)

// expireOptions are the flags of `memvault expire`.
type expireOptions struct {
	unusedFor string
	dryRun    bool
}

func newExpireCommand(g *globalOptions) *cobra.Command {
	var opts expireOptions
	c := &cobra.Command{
		Use:   "expire --unused-for AGE",
		Short: "Delete memory files no one has viewed or changed for a while",
		Long: `Expire deletes every memory file that has been neither viewed through the memory
tool nor changed for the given time, all in one commit: one revert of that commit
brings them all back. Views are recorded on this machine only (in the vault's memvault/
directory, never as commits), so a file read only on another machine may look unused here.`,
		Example: `  memvault expire --unused-for 90d --dry-run
  memvault expire --unused-for 12w`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runExpire(c.Context(), g, opts, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&opts.unusedFor, "unused-for", "", "delete files unused for `AGE`: 90d, 12w, 36h")
	c.Flags().BoolVar(&opts.dryRun, "dry-run", false, "list what would be deleted, delete nothing")
	return c
}

func runExpire(ctx context.Context, g *globalOptions, opts expireOptions, out io.Writer) (err error) {
	if opts.unusedFor == "" {
		return &usageError{cmd: "memvault expire", err: errors.New("--unused-for AGE is required: " +
			"how long a file must have gone unviewed and unchanged, such as 90d")}
	}
	age, err := parseAge(opts.unusedFor)
	if err != nil {
		return &usageError{cmd: "memvault expire", err: err}
	}
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	unused, commit, err := v.Expire(ctx, age, opts.dryRun)
	if err != nil {
		return err
	}
	verb := "deleted"
	if opts.dryRun {
		verb = "would delete"
	}
	for _, u := range unused {
		last := "not used since " + time.Now().Add(-age).Format(time.DateOnly)
		if !u.LastUsed.IsZero() {
			last = "last used " + u.LastUsed.Local().Format(time.DateOnly)
		}
		fmt.Fprintf(out, "%s %s (%s)\n", verb, escape.Name(u.Path), last)
	}
	switch {
	case len(unused) == 0:
		fmt.Fprintf(out, "nothing unused for %s\n", opts.unusedFor)
	case commit != "":
		fmt.Fprintf(out, "%d files deleted in commit %s; undo with: memvault revert %s\n", len(unused), commit[:12], commit[:12])
	}
	return nil
}

// parseAge reads an age such as 90d, 12w or a Go duration (36h, 90m).
func parseAge(s string) (time.Duration, error) {
	unit := map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour}
	for suffix, d := range unit {
		if n, err := strconv.Atoi(strings.TrimSuffix(s, suffix)); strings.HasSuffix(s, suffix) && err == nil && n > 0 {
			return time.Duration(n) * d, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--unused-for %q: want a positive age such as 90d, 12w or 36h", s)
	}
	return d, nil
}
