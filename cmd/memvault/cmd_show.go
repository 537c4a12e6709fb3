package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// revisionHelp explains revisions in the help of every command that takes one.
const revisionHelp = `A revision is a commit hash (or at least its first 4 digits), main (the current
state), a checkpoint name, or any of these followed by ~N for N commits before it
(main~1 is the commit before the last); ~N alone counts back from main.
main@{DATE} (or @{DATE}) is what main held at DATE in this vault, read from the
vault's own record of when its main moved here (each commit, fast-forward, merge
and repair), never from commit dates, which whoever made a commit wrote. DATE is
2026-11-24T10:00:00Z, 2026-11-24 (midnight UTC) or an age such as 3h or 2d
(main@{2d} is main as it was here two days ago); a time before the record starts
(before this clone was made) has no answer, and says so.`

func newShowCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show REV",
		Short: "Show one commit: what it did and the decrypted diff",
		Long: `Show prints one commit of the vault: its hash, time and author, its subject and
trailers (the memory command, the path, the tool call that made it), the memory
files it changed, and the diff of their decrypted content against the commit before.

` + revisionHelp + `

With --json, the commit is one JSON object: the fields of 'memvault log --json' plus
files, a list of {path, new_path, status, diff}, status being added, modified,
deleted or renamed.`,
		Example: `  memvault show main
  memvault show 3f2a1c9
  memvault show before-cleanup~1 --json | jq -r '.files[].diff'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runShow(c.Context(), g, args[0], asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the commit as one JSON object")
	return c
}

func runShow(ctx context.Context, g *globalOptions, rev string, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	ch, err := v.Show(ctx, rev)
	if err != nil {
		return err
	}
	if asJSON {
		if ch.Parents == nil {
			ch.Parents = []string{}
		}
		if ch.Files == nil {
			ch.Files = []vault.FileChange{}
		}
		return writeRecordJSON(out, "show", ch)
	}
	return writeChange(out, ch, stylesFor(out))
}

// writeChange prints one commit as show does: its header, trailers, the
// files it changed and their decrypted diffs.
func writeChange(out io.Writer, ch *vault.Change, st styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", st.yellow("commit "+ch.Commit))
	signed := "no: no writer's signature"
	if ch.Signer != "" {
		signed = "by " + escape.Name(ch.Signer)
	}
	fmt.Fprintf(&b, "Author: %s\nDate:   %s\nSigned: %s\n\n    %s\n\n", escape.Name(ch.Author), ch.Time.Local().Format("2006-01-02 15:04:05 -0700"), signed, escape.Name(ch.Subject))
	for _, t := range [][2]string{
		{"Memory-Command", ch.Command}, {"Memory-Path", ch.Path}, {"Memory-New-Path", ch.NewPath},
		{"Memory-Source", ch.Source}, {"Tool-Use-Id", ch.ToolUseID}, {"Agent", ch.Agent}, {"Session", ch.Session},
		{"Memory-Approved", ch.Approved},
	} {
		if t[1] != "" {
			fmt.Fprintf(&b, "    %s: %s\n", t[0], escape.Name(t[1]))
		}
	}
	// A merge's conflicts and the files an expiry deleted are trailers too,
	// one a file: what a person has to settle, or what a revert brings back.
	for _, p := range ch.Conflicts {
		fmt.Fprintf(&b, "    Memory-Conflict: %s\n", escape.Name(p))
	}
	for _, p := range ch.Deleted {
		fmt.Fprintf(&b, "    Memory-Deleted: %s\n", escape.Name(p))
	}
	if ch.TreeDisagrees {
		fmt.Fprintf(&b, "\n%s: the trailers above are not to be believed; the files below are what it changed\n", st.bold(strings.Trim(treeSays(ch.Record), "[]")))
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("show: write: %w", err)
	}
	if len(ch.Files) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	writeFileList(out, ch.Files, st)
	fmt.Fprintln(out)
	return writeDiffs(out, ch.Files, st)
}
