package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// grepOptions are the flags of `memvault grep`.
type grepOptions struct {
	at        string
	fold      bool
	namesOnly bool
	numbers   bool
	context   int
	json      bool
	paths     []string
}

func newGrepCommand(g *globalOptions) *cobra.Command {
	var opts grepOptions
	c := &cobra.Command{
		Use:   "grep PATTERN [--at REV] [-i] [-l] [-n] [-C N] [--json] [-- PATH...]",
		Short: "Search the decrypted memory files for a regular expression",
		Long: `Grep decrypts the memory files in memory and prints the lines that PATTERN
matches, each as PATH:TEXT (PATH:N:TEXT with -n), like grep -r. PATTERN is a Go
regular expression (RE2: no backreferences), matched against each line without its
newline. With PATHs (after --), only those files and directories are searched.

-i ignores case, -l prints only the paths of files with a match, -C N prints N lines
of context around each match (PATH-N-TEXT, groups apart by "--"). --at searches the
vault as it was at revision REV (a hash, main, a checkpoint, REV~N, main@{DATE}).
--json prints one object: commit, files (path, matches, lines of line, text, match).

The exit status is grep's: 0 when a line matched, 1 when none did, 2 on trouble.
An entry of the vault that is no memory file memvault can read (put there by hand
with git, or damaged) does not stop the search: the rest is searched, the status is
as usual, and stderr names each such entry and says the search was incomplete
(--json also lists them as bad_entries).`,
		Example: `  memvault grep -n 'deadline'
  memvault grep -i -C 2 'prefers (tea|coffee)' -- notes
  memvault grep -l TODO --at main@{1w}`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			pat := args[0]
			if opts.fold {
				pat = "(?i)" + pat
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("pattern %q: %w", args[0], err)}
			}
			if opts.context < 0 {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("-C %d: want 0 or more", opts.context)}
			}
			for _, a := range args[1:] {
				p, err := memoryPath(c, a)
				if err != nil {
					return err
				}
				opts.paths = append(opts.paths, p)
			}
			return runGrep(c.Context(), g, re, opts, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&opts.at, "at", "", "search the vault as it was at revision `REV`")
	c.Flags().BoolVarP(&opts.fold, "ignore-case", "i", false, "ignore case")
	c.Flags().BoolVarP(&opts.namesOnly, "files-with-matches", "l", false, "print only the paths of files with a match")
	c.Flags().BoolVarP(&opts.numbers, "line-number", "n", false, "print each line's number")
	c.Flags().IntVarP(&opts.context, "context", "C", 0, "print `N` lines of context around each match")
	c.Flags().BoolVar(&opts.json, "json", false, "print one JSON object")
	return c
}

func runGrep(ctx context.Context, g *globalOptions, re *regexp.Regexp, opts grepOptions, out, stderr io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	ctxLines := opts.context
	if opts.namesOnly {
		ctxLines = 0
	}
	res, err := v.Grep(ctx, re, vault.GrepOptions{Rev: opts.at, Paths: opts.paths, Context: ctxLines})
	if err != nil {
		return err
	}
	if opts.json {
		if res.Files == nil {
			res.Files = []vault.GrepFile{}
		}
		if err := writeRecordJSON(out, "grep", res); err != nil {
			return err
		}
	} else if err := writeGrepText(out, res, opts, stylesFor(out)); err != nil {
		return err
	}
	// The status stays grep's, for the files that were searched: a damaged
	// entry must not turn every later search into trouble. Stderr says the
	// search was incomplete, so a match or none is never a silent answer.
	writeBadEntries(stderr, "grep: the search is incomplete", "not searched", res.BadEntries)
	if len(res.Files) == 0 {
		return errErrorAnswer // grep's status 1: nothing matched; stdout says so by being empty
	}
	return nil
}

// writeGrepText prints matches as grep -r does, each name quoted as log
// quotes it and each line escaped, to a pipe too: the files may be a
// collaborator's, and a pager (less -R) obeys what a terminal would.
func writeGrepText(out io.Writer, res *vault.GrepResult, opts grepOptions, st styles) error {
	var b strings.Builder
	printed := false
	for _, f := range res.Files {
		name := st.bold(escape.Name(f.Path))
		if opts.namesOnly {
			b.WriteString(name + "\n")
			continue
		}
		prev := 0
		for _, l := range f.Lines {
			// grep -C parts groups of lines that do not follow each other, in a file or across files.
			if opts.context > 0 && printed && (prev == 0 || l.Number > prev+1) {
				b.WriteString(st.cyan("--") + "\n")
			}
			printed = true
			sep := "-"
			if l.Match {
				sep = ":"
			}
			b.WriteString(name + sep)
			if opts.numbers {
				b.WriteString(st.green(fmt.Sprint(l.Number)) + sep)
			}
			b.WriteString(escape.Line(l.Text) + "\n")
			prev = l.Number
		}
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("grep: write: %w", err)
	}
	return nil
}

// writeBadEntries says on stderr, once, which entries a command left out
// because they are no memory file memvault can read: what (the command and
// what that means for its result), then each entry's path and reason,
// escaped as status escapes them. Nothing when there are none.
func writeBadEntries(stderr io.Writer, what, done string, bad []vault.EntryError) {
	if len(bad) == 0 {
		return
	}
	var b strings.Builder
	noun := "entries are"
	if len(bad) == 1 {
		noun = "entry is"
	}
	fmt.Fprintf(&b, "memvault: %s: %d %s no memory file memvault can read, %s:\n", what, len(bad), noun, done)
	for _, e := range bad {
		fmt.Fprintf(&b, "memvault:   %s  %s\n", escape.Name(e.Path), escape.Name(e.Reason))
	}
	io.WriteString(stderr, b.String())
}
