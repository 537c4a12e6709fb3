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

// provenanceCommands are the commands that answer questions about content.
func provenanceCommands(g *globalOptions) []*cobra.Command {
	return []*cobra.Command{newBlameCommand(g), newGrepCommand(g)}
}

func newBlameCommand(g *globalOptions) *cobra.Command {
	var at string
	var asJSON bool
	c := &cobra.Command{
		Use:   "blame PATH [--at REV] [--json]",
		Short: "Show which commit, tool call and agent brought each line of a file",
		Long: `Blame prints each line of a memory file with the commit that brought it: its short
hash, time, memory command, tool-use id, agent and session. It follows the file back
through renames, and reads the history along first parents, decrypting each version
once, in memory.

A line that an undo (restore, revert, rollback) or a sync merge brought back names
that commit, then "<" and the commit that first wrote the line. A line of a sync merge
that came from the other side names the merge and, the same way, the other side's
commit.

With --at, the file as it was at revision REV (a hash, main, a checkpoint, REV~N, or
main@{DATE} such as main@{2d}: what main held then, by this vault's record of when
its main moved). With --json, one object: path, commit, lines (line, text,
commit, path, origin, origin_path) and commits (each commit's record, as log --json).`,
		Example: `  memvault blame notes/todo.md
  memvault blame /memories/user_profile.md --at main@{2026-11-24}
  memvault blame notes/todo.md --json | jq -r '.lines[] | select(.origin != null) | .text'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := memoryPath(c, args[0])
			if err != nil {
				return err
			}
			return runBlame(c.Context(), g, p, at, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&at, "at", "", "blame the file as it was at revision `REV`")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func runBlame(ctx context.Context, g *globalOptions, p, at string, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	b, err := v.Blame(ctx, p, at)
	name := p
	if at != "" {
		name += " at " + at
	}
	switch {
	case errors.Is(err, vault.ErrIsDir):
		return fmt.Errorf("blame %s: %w", name, errMemoryDir)
	case errors.Is(err, vault.ErrNotExist) && !errors.Is(err, vault.ErrNoIdentity):
		return fmt.Errorf("blame %s: %w ('memvault log %s' lists the commits that changed it)", name, errNoMemory, p)
	case err != nil:
		return err
	}
	if asJSON {
		if b.Lines == nil {
			b.Lines = []vault.BlameLine{}
		}
		return writeRecordJSON(out, "blame", b)
	}
	return writeBlameText(out, b, stylesFor(out))
}

// writeBlameText writes one line a line of the file: who brought it, then the
// line number and the text, the columns aligned. The trailers and the text
// are a collaborator's: they are escaped as log and show escape them, to a
// pipe too, since a pager (less -R) obeys what a terminal would.
func writeBlameText(out io.Writer, b *vault.Blame, st styles) error {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return escape.Name(s)
	}
	type row struct{ who, when, cmd, tool, agent, session string }
	rows := make([]row, len(b.Lines))
	var w row
	marked := false
	width := func(have *string, s string) {
		if len(s) > len(*have) {
			*have = s
		}
	}
	for i, l := range b.Lines {
		r := b.Commits[l.Commit]
		who := shortHash(l.Commit)
		if l.Origin != "" {
			who += "<" + shortHash(l.Origin)
		}
		rows[i] = row{who, r.Time.Local().Format("2006-01-02 15:04"), dash(r.Command), dash(r.ToolUseID), dash(r.Agent), dash(r.Session)}
		if r.TreeDisagrees {
			rows[i].cmd += "!" // see the note below the lines
			marked = true
		}
		width(&w.who, who)
		width(&w.cmd, rows[i].cmd)
		width(&w.tool, rows[i].tool)
		width(&w.agent, rows[i].agent)
		width(&w.session, rows[i].session)
	}
	num := len(fmt.Sprint(len(b.Lines)))
	var sb strings.Builder
	for i, l := range b.Lines {
		r := rows[i]
		fmt.Fprintf(&sb, "%s  %s  %-*s  %s  %-*s  %-*s  %*d  %s\n",
			st.yellow(fmt.Sprintf("%-*s", len(w.who), r.who)), r.when, len(w.cmd), r.cmd,
			st.dim(fmt.Sprintf("%-*s", len(w.tool), r.tool)), len(w.agent), r.agent,
			len(w.session), r.session, num, l.Number, escape.Line(l.Text))
	}
	if marked {
		sb.WriteString("! the commit's trailers (command, path, tool-use id) name another file than its tree changed: " +
			"they are not to be believed; 'memvault show COMMIT' shows what it did\n")
	}
	if _, err := io.WriteString(out, sb.String()); err != nil {
		return fmt.Errorf("blame: write: %w", err)
	}
	return nil
}
