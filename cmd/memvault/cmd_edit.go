package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// errNoMemoryFolder: no folder kept in memory is at hand for an edit.
var errNoMemoryFolder = errors.New("edit: no folder kept in memory (tmpfs) is at hand for the decrypted file " +
	"($XDG_RUNTIME_DIR, /dev/shm and /run/shm were tried), and memvault never writes plaintext to a disk")

func newEditCommand(g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "edit PATH",
		Short: "Edit one memory file in $EDITOR and commit what it saved as one change",
		Long: `Edit decrypts one memory file into a private folder kept in memory (a tmpfs:
$XDG_RUNTIME_DIR, else /dev/shm), opens it in $VISUAL, else $EDITOR, else vi, and when
the editor exits commits what it saved as one change (Memory-Command: edit). The
folder (mode 0700) and the file (mode 0600) are removed as soon as the editor exits,
with anything else the editor left beside the file: vim's swap file and emacs's
backup and auto-save files are written next to the file by default, so they live and
die in that folder too. memvault refuses when no such folder is in memory, rather
than put plaintext on a disk. An editor told to keep swap, backup or undo files in a
folder of its own (vim's 'directory', 'backupdir' and 'undodir', emacs's
backup-directory-alist) writes them there, on disk: for vi, vim and nvim memvault
turns them off (-n, -i NONE, noundofile, nobackup, nowritebackup); for other
editors, check their settings.

An editor that exits without saving changes nothing. If the file changed meanwhile
(an agent wrote to it), both changes are merged by lines; where they touch the same
lines the editor opens again on the file with both versions between conflict
markers. This is also how a person settles a conflict a sync merge left: 'memvault
status' lists the files.`,
		Example: `  memvault edit notes/profile.md
  EDITOR=nano memvault edit /memories/todo.md`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := memoryPath(c, args[0])
			if err != nil {
				return err
			}
			return runEdit(c.Context(), g, p, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	return c
}

func runEdit(ctx context.Context, g *globalOptions, p string, in io.Reader, out, errOut io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return err
	}
	base, err := snap.ReadFile(ctx, p)
	switch {
	case errors.Is(err, vault.ErrNotExist):
		return fmt.Errorf("edit %s: %w (the memory tool's create makes one)", escape.Name(p), errNoMemory)
	case errors.Is(err, vault.ErrIsDir):
		return fmt.Errorf("edit %s: %w", escape.Name(p), errMemoryDir)
	case err != nil:
		return err
	}
	text := base
	for {
		edited, err := editInMemory(path.Base(p), text, in, out, errOut)
		if err != nil {
			return err
		}
		if bytes.Equal(edited, text) && bytes.Equal(text, base) {
			fmt.Fprintf(out, "%s: no change\n", escape.Name(p))
			return nil
		}
		// What the person saved is committed even if Ctrl-C reached memvault
		// while the editor had it.
		merged, err := v.WriteEdit(context.WithoutCancel(ctx), vault.Meta{Agent: "memvault"}, p, base, edited)
		clear(edited)
		if errors.Is(err, vault.ErrConflict) && merged != nil {
			fmt.Fprintf(errOut, "memvault: %s changed meanwhile in the same lines: settle the conflict markers, then save\n", escape.Name(p))
			now, err := v.Snapshot(ctx)
			if err != nil {
				return err
			}
			if base, err = now.ReadFile(ctx, p); err != nil {
				return err
			}
			text = merged
			continue
		}
		if err != nil {
			return err
		}
		after, err := v.Snapshot(ctx)
		if err != nil {
			return err
		}
		if after.Commit() == snap.Commit() {
			fmt.Fprintf(out, "%s: no change\n", escape.Name(p))
			return nil
		}
		fmt.Fprintf(out, "edit %s: committed %s\n", escape.Name(p), short(after.Commit()))
		return nil
	}
}

// editInMemory writes text to a file named name in a new private folder of a
// file system kept in memory, runs the editor on it and returns what it
// saved. The folder goes, with whatever the editor left in it, before this
// returns, whatever happened.
func editInMemory(name string, text []byte, in io.Reader, out, errOut io.Writer) ([]byte, error) {
	var parent string
	for _, d := range memoryFolders() {
		if inMemory(d) {
			parent = d
			break
		}
	}
	if parent == "" {
		return nil, errNoMemoryFolder
	}
	dir, err := os.MkdirTemp(parent, "memvault-edit-")
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, text, 0o600); err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	// Ctrl-C belongs to the editor while it runs (vim takes it to cancel a
	// command): the editor is not bound to ctx, which the signal cancels, and
	// memvault, which catches the signal, stays to clean up and commit.
	argv := editorCommand(file)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, errOut
	if f, ok := in.(*os.File); ok {
		cmd.Stdin = f
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("edit: the editor %s failed (%v): nothing was changed", argv[0], err)
	}
	edited, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("edit: read the edited file back: %w", err)
	}
	return edited, nil
}

// editorCommand is the command line that edits file: $VISUAL, else $EDITOR
// (either may hold arguments), else vi. vi, vim and nvim are told to keep no
// swap, undo, backup or history file, which they could put outside the
// folder in memory.
func editorCommand(file string) []string {
	editor := strings.Fields(firstNonEmpty(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi"))
	switch filepath.Base(editor[0]) {
	case "vi", "vim", "nvim", "gvim", "view":
		editor = append(editor, "-n", "-i", "NONE", "-c", "set noundofile nobackup nowritebackup")
	}
	return append(editor, file)
}
