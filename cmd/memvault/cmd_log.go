package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// logOptions are the flags of `memvault log`.
type logOptions struct {
	path    string // canonical memory path, or "" for the whole vault
	limit   int
	skip    int
	since   string // as given; parsed by parseSince
	command string
	json    bool
	// pickaxe: -S TEXT, or -G REGEX (pickaxeRe)
	pickaxe   string
	pickaxeRe string
}

func newLogCommand(g *globalOptions) *cobra.Command {
	var opts logOptions
	c := &cobra.Command{
		Use:   "log [PATH]",
		Short: "Show the vault's history, newest first",
		Long: `Log lists the commits of the vault, newest first: one line each with the short
commit hash, the time, the memory command, its path(s) and the tool-use id that made it.
With PATH, only the commits that changed that file or directory (a path that does not
start with "/" is taken under /memories), following it back through the renames that
moved it there. A restore, revert or rollback names the commit it took its content
from. Log reads no file contents and needs no identity, unless -S or -G asks it to.

--since keeps the commits made since a time: a date (2025-06-01), a date and time
(2025-06-01 14:30, or RFC 3339), or a duration ago (90m, 12h, 3d, 2w). --command keeps
one memory command's commits (create, str_replace, insert, delete, rename, restore,
revert, rollback, ...). -S TEXT keeps the commits whose decrypted change adds or removes
TEXT (the number of times it occurs in a file differs before and after), -G REGEX those
whose change adds or removes a line the Go regular expression matches, as git log -S
and -G do; these decrypt the changes, in memory, and need the identity. -n and --skip
then page through what is left.

With --json, each commit is one JSON object on its own line, with the fields commit,
parents, time (RFC 3339), author, command, path, new_path, tool_use_id, agent, session,
source, origin (where a change pulled from a memory store was made) and subject.`,
		Example: `  memvault log
  memvault log -n 5 /memories/progress.md
  memvault log --since 2d --command delete
  memvault log -S 'prefers tea' /memories/user_profile.md
  memvault log -G '^- deadline'
  memvault log -n 20 --skip 20
  memvault log --json | jq -r 'select(.tool_use_id != "") | .tool_use_id'`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.limit < 0 {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("-n %d: want 0 (all) or more", opts.limit)}
			}
			if opts.skip < 0 {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("--skip %d: want 0 or more", opts.skip)}
			}
			if _, err := parseSince(opts.since, time.Now()); err != nil {
				return &usageError{cmd: c.CommandPath(), err: err}
			}
			if opts.pickaxe != "" && opts.pickaxeRe != "" {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("-S and -G: give one of them")}
			}
			if c.Flags().Changed("pickaxe") && opts.pickaxe == "" || c.Flags().Changed("pickaxe-regexp") && opts.pickaxeRe == "" {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("-S and -G want a non-empty text")}
			}
			if _, err := regexp.Compile(opts.pickaxeRe); err != nil {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("-G %q: %w", opts.pickaxeRe, err)}
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
	c.Flags().IntVar(&opts.skip, "skip", 0, "leave out the first `N` commits that match (a page's offset)")
	c.Flags().StringVar(&opts.since, "since", "", "only commits made since `T`: a date, a date and time, or a duration ago (3d)")
	c.Flags().StringVar(&opts.command, "command", "", "only commits of the memory command `C`")
	c.Flags().BoolVar(&opts.json, "json", false, "print one JSON object a line")
	c.Flags().StringVarP(&opts.pickaxe, "pickaxe", "S", "", "only commits whose change adds or removes `TEXT`")
	c.Flags().StringVarP(&opts.pickaxeRe, "pickaxe-regexp", "G", "", "only commits whose change adds or removes a line matching `REGEX`")
	return c
}

func runLog(ctx context.Context, g *globalOptions, opts logOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	since, _ := parseSince(opts.since, time.Now())
	lo := vault.LogOptions{Path: opts.path, Limit: opts.limit, Skip: opts.skip, Since: since, Command: opts.command, Pickaxe: opts.pickaxe}
	if opts.pickaxeRe != "" {
		lo.PickaxeRegexp = regexp.MustCompile(opts.pickaxeRe) // checked in RunE
	}
	recs, err := v.Log(ctx, lo)
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
	for _, r := range recs {
		if r.Parents == nil {
			r.Parents = []string{}
		}
		if err := writeRecordJSON(out, "log", r); err != nil {
			return err
		}
	}
	return nil
}

// writeLogText writes one readable line a commit:
// short hash, local time, command, path(s), tool-use id, each escaped.
func writeLogText(out io.Writer, recs []vault.Record, st styles) error {
	for _, r := range recs {
		what := escape.Name(r.Subject)
		if r.Command != "" {
			what = fmt.Sprintf("%-11s  %s", escape.Name(r.Command), escape.Name(r.Path))
			if r.NewPath != "" {
				what += " -> " + escape.Name(r.NewPath)
			}
			if r.Source != "" {
				what += "  " + st.dim("from "+escape.Name(shortHash(r.Source)))
			}
		}
		line := fmt.Sprintf("%s  %s  %s", st.yellow(shortHash(r.Commit)),
			r.Time.Local().Format("2006-01-02 15:04:05"), what)
		if r.ToolUseID != "" {
			line += "  " + st.dim(escape.Name(r.ToolUseID))
		}
		if r.TreeDisagrees {
			line += "  " + st.bold(treeSays(r))
		}
		if _, err := fmt.Fprintln(out, strings.TrimRight(line, " ")); err != nil {
			return fmt.Errorf("log: write: %w", err)
		}
	}
	return nil
}

// treeSays marks a record whose trailers name other paths than its tree
// changed: the trailers are what whoever made the commit wrote.
func treeSays(r vault.Record) string {
	names := make([]string, len(r.TreeChanged))
	for i, p := range r.TreeChanged {
		names[i] = escape.Name(p)
	}
	if len(names) == 0 {
		return "[NOT WHAT THE TREE SAYS: it changed no memory file]"
	}
	return "[NOT WHAT THE TREE SAYS: it changed " + strings.Join(names, ", ") + "]"
}

func shortHash(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// parseSince reads --since: "" (no bound), a date, a date and time (local), RFC
// 3339, or a duration before now ("90m", "12h", "3d", "2w").
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.DateOnly, "2006-01-02 15:04", time.DateTime, "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 && unit[s[n-1]] != 0 {
		if k, err := strconv.Atoi(s[:n-1]); err == nil && k >= 0 {
			return now.Add(-time.Duration(k) * unit[s[n-1]]), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a date (2025-06-01), a date and time (2025-06-01 14:30) or a duration ago (90m, 3d, 2w)", s)
}
