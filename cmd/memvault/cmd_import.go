package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/memstore"
)

// importOptions are the flags of memvault import.
type importOptions struct {
	to        string
	dryRun    bool
	overwrite bool
	history   bool
}

func newImportCommand(g *globalOptions) *cobra.Command {
	var o importOptions
	c := &cobra.Command{
		Use:   "import SOURCE [--to /memories/SUB] [--dry-run] [--overwrite] [--history]",
		Short: "Bring memory files in from a folder or a git repository, in one commit",
		Long: `Import brings the text files of SOURCE into the vault, encrypted, in one commit
(Memory-Command: import) written as one pack. SOURCE is a folder:

  - the Anthropic SDKs' local-filesystem memory folder: name its base (the folder
    holding memories/, by default ./memory) or the memories folder itself;
  - a Claude Code project memory folder (~/.claude/projects/PROJECT/memory/, with
    MEMORY.md and the files beside it);
  - any folder of text files, such as one 'memvault export' wrote;
  - with --history, a git repository of memory files: each commit of its history
    (first parent, oldest first) becomes one memvault commit with its author and
    time. A re-run brings in only the commits not brought in yet.

Each file SOURCE/P becomes /memories/P (or SUB/P with --to). Every path goes through
the memory tool's path rules. Files that are not UTF-8 text (NUL bytes included), are
over the vault's file size limit, are symbolic links or are not regular files (judged by
what was opened, never following a link or waiting on a FIFO) are skipped and listed with
the reason, as are .git folders. The vault's secretPolicy holds as for the memory tool:
reject leaves a file with a secret out, redact writes it redacted, warn lists it. A file
already in the vault with other content is kept as it is unless --overwrite, and with
--history a later source commit replaces or deletes only what the import wrote; one with
the same content changes nothing, so running the same import again makes no commit. An import that would pass the vault's file count or
size limits is refused whole, and one import writes at most memvault.maxVaultSize
bytes of files (256 MiB when unset), over all the commits --history replays. The commit names no path of this machine.`,
		Example: `  memvault import ./memory                       # an SDK memory folder
  memvault import ~/.claude/projects/-home-me-app/memory --to /memories/claude-code
  memvault import ./backup --dry-run
  memvault import ./letta-memory --history`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			to, err := memoryPath(c, o.to)
			if err != nil {
				return err
			}
			o.to = to
			if o.history && o.dryRun {
				return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("--dry-run cannot be used with --history")}
			}
			return runImport(c.Context(), g, args[0], o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&o.to, "to", vault.Root, "the memory folder `SUB` the files go under")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be imported, and change nothing")
	c.Flags().BoolVar(&o.overwrite, "overwrite", false, "replace files already in the vault whose content differs")
	c.Flags().BoolVar(&o.history, "history", false, "SOURCE is a git repository: replay each of its commits")
	return c
}

func runImport(ctx context.Context, g *globalOptions, source string, o importOptions, out, errw io.Writer) (err error) {
	if store, ok := memstore.StoreID(source); ok {
		return runStoreImport(ctx, g, store, errw, out)
	}
	if fi, err := os.Stat(source); err != nil {
		return fmt.Errorf("import: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("import: %s is not a folder", source)
	}
	// Bringing memory in may be the first thing done with a vault; a dry run
	// creates nothing, and answers for a vault import would create as for
	// that new vault (dryRunVault).
	open := func() (*vault.Vault, func(), error) {
		v, err := g.openFace(ctx, errw, g.passphrase)
		return v, func() {}, err
	}
	if o.dryRun {
		open = func() (*vault.Vault, func(), error) { return dryRunVault(ctx, g) }
	}
	v, cleanup, err := open()
	if err != nil {
		return err
	}
	defer cleanup()
	defer closeVault(v, &err)
	if o.history {
		return importHistory(ctx, v, source, o, out, errw)
	}
	files, skipped, err := readFolder(ctx, source, o.to, v.Limits())
	if err != nil {
		return err
	}
	bar := newProgressBar(errw)
	bar.label = "importing"
	res, err := v.Import(ctx, files, vault.ImportOptions{
		Overwrite: o.overwrite, DryRun: o.dryRun, Progress: bar.update,
		Screen: agent.ImportScreen(v.Limits()),
	})
	bar.done()
	if err != nil {
		return err
	}
	res.Skipped = append(skipped, res.Skipped...)
	printImport(out, res, o)
	return nil
}

// printImport says what an import did, or would do.
func printImport(out io.Writer, res vault.ImportResult, o importOptions) {
	verb := map[bool]string{false: "", true: "would be "}[o.dryRun]
	fmt.Fprintf(out, "%d files %sadded, %d %sreplaced, %d %sdeleted, %d already there\n",
		len(res.Added), verb, len(res.Replaced), verb, len(res.Deleted), verb, res.Unchanged)
	if len(res.Kept) > 0 {
		fmt.Fprintf(out, "%d files kept as they are in the vault, whose content differs (--overwrite replaces them):\n", len(res.Kept))
		for _, p := range res.Kept {
			fmt.Fprintf(out, "  %s\n", escape.Name(p))
		}
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintf(out, "%d files %simported with a warning (the vault's secretPolicy):\n", len(res.Warnings), verb)
		for _, s := range res.Warnings {
			fmt.Fprintf(out, "  %s: %s\n", escape.Name(s.Path), escape.Text(s.Reason))
		}
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(out, "%d files skipped:\n", len(res.Skipped))
		for _, s := range res.Skipped {
			fmt.Fprintf(out, "  %s: %s\n", escape.Name(s.Path), escape.Text(s.Reason))
		}
	}
	switch {
	case o.dryRun:
		fmt.Fprintln(out, "dry run: nothing changed")
	case res.Commit == "":
		fmt.Fprintln(out, "nothing to import: the vault is unchanged")
	default:
		fmt.Fprintf(out, "imported in commit %s\n", res.Commit[:12])
	}
}

// dryRunVault opens the vault a dry run of import reads. Where there is no
// vault yet (nothing at its place, or an empty folder), import would create
// one, so the dry run answers for a new vault: one made, with an identity of
// its own, in a temporary folder that is gone when the vault closes. It once
// refused ("not a memvault vault … run 'memvault init'") where import itself
// works.
func dryRunVault(ctx context.Context, g *globalOptions) (*vault.Vault, func(), error) {
	none := func() {}
	v, err := g.open(ctx)
	if !errors.Is(err, vault.ErrNotVault) {
		return v, none, err
	}
	dir, _, perr := g.paths()
	if perr != nil {
		return nil, none, err
	}
	if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 || rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return nil, none, err // something else is there: import would refuse it too
	}
	tmp, terr := os.MkdirTemp("", "memvault-dry-run-")
	if terr != nil {
		return nil, none, fmt.Errorf("import: %w", terr)
	}
	cleanup := func() { os.RemoveAll(tmp) }
	nv, _, ierr := vault.Init(ctx, filepath.Join(tmp, "vault.git"), vault.Options{IdentityFile: filepath.Join(tmp, "identity")})
	if ierr != nil {
		cleanup()
		return nil, none, ierr
	}
	return nv, cleanup, nil
}
