package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/plainexport"
)

func newExportCommand(g *globalOptions) *cobra.Command {
	var at, from string
	c := &cobra.Command{
		Use:   "export DIR|- [--at REV] [--from /memories/SUB]",
		Short: "Write every memory file out as plaintext, to a folder or a tar stream",
		Long: `Export decrypts every memory file of the vault and writes it out in PLAINTEXT:
anyone who can read what it writes can read the memory. It says so on stderr.

DIR must not exist or be empty. Each file /memories/P is written to DIR/memories/P,
so DIR is laid out as the Anthropic SDKs' local-filesystem memory tool keeps its base
folder, and 'memvault import DIR' brings the same files back, byte for byte. Files
are made readable by you alone (0600), folders 0700.

With "-" instead of DIR, export writes a tar stream to stdout with the same paths
(memories/P) and modes.

With --at, the files as they were at revision REV: a commit hash (or at least its first
4 digits), main, a checkpoint name, or any of these followed by ~N.

With --from, only the files under the memory folder SUB, each SUB/P written to DIR/P:
the layout of a Claude Code project memory folder (MEMORY.md and the files beside
it) that 'memvault import FOLDER --to SUB' brought in, byte for byte.

An entry of the vault that is no memory file memvault can read (put there by hand
with git, or damaged) does not stop the export: every other file is written, stderr
names each entry left out, and the exit status is 1, so a script does not take the
partial export for a whole one.`,
		Example: `  memvault export ./memory-backup
  memvault export - | tar -tvf -
  memvault export ./before --at main~5
  memvault export ./claude-memory --from /memories/claude-code`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if from != "" {
				p, err := memoryPath(c, from)
				if err != nil {
					return err
				}
				from = p
			}
			return runExport(c.Context(), g, args[0], at, from, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&at, "at", "", "export the files as they were at revision `REV`")
	c.Flags().StringVar(&from, "from", "", "export only the memory folder `SUB`, its files at the top of DIR")
	return c
}

func runExport(ctx context.Context, g *globalOptions, dest, at, from string, stdout, stderr io.Writer) (err error) {
	if dest == "-" && isTerminal(stdout) {
		// A tar stream on a screen is noise that shows the plaintext, and can
		// drive the terminal: refused before anything is decrypted, as tar does.
		return &usageError{cmd: "memvault export", err: errors.New("refusing to write a tar stream " +
			"to a terminal: redirect stdout to a file or a pipe (memvault export - > memory.tar), " +
			"or give a folder instead of -")}
	}
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	snap, err := v.Snapshot(ctx)
	if at != "" {
		snap, err = v.SnapshotAt(ctx, at)
	}
	if err != nil {
		return err
	}
	files, bad, err := plainexport.Files(ctx, snap, from)
	if err != nil {
		return err
	}
	if from != "" && len(files) == 0 && len(bad) == 0 {
		return fmt.Errorf("export --from %s: %w", escape.Name(from), errNoMemory)
	}
	var sink plainexport.Sink
	where := "stdout, as a tar stream"
	if dest == "-" {
		sink = plainexport.NewTarSink(stdout, time.Now())
	} else {
		if sink, err = plainexport.NewDirSink(dest); err != nil {
			return err
		}
		where = dest
	}
	fmt.Fprintf(stderr, "memvault: export: writing %d memory files as PLAINTEXT to %s; "+
		"anyone who can read them there can read your memory\n", len(files), where)
	unread, err := plainexport.Write(ctx, snap, files, from, sink)
	if err != nil {
		_ = sink.Close()
		return err
	}
	if err := sink.Close(); err != nil {
		return err
	}
	// Every file that reads is out; the status says the export is not whole,
	// so a script does not take it for a backup of everything.
	bad = append(bad, unread...)
	slices.SortFunc(bad, func(a, b vault.EntryError) int { return strings.Compare(a.Path, b.Path) })
	writeBadEntries(stderr, "export: incomplete", "not exported", bad)
	if len(bad) > 0 {
		return errLeftOut
	}
	return nil
}
