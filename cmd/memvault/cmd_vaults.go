package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// vaultName is a vault named rather than given as a folder: letters, digits, '-'
// and '_' only, so "work.git", "./work" and "a/b" stay paths.
var vaultName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// vaultsDir is where named vaults live: $XDG_DATA_HOME/memvault.
func vaultsDir() (string, error) {
	d, err := vault.DefaultDir()
	if err != nil {
		return "", fmt.Errorf("find the vaults folder: %w", err)
	}
	return filepath.Dir(d), nil
}

// resolveVault turns a --vault or $MEMVAULT_DIR value into a folder: a plain
// NAME is $XDG_DATA_HOME/memvault/NAME.git, anything else is a path.
func resolveVault(s string) (string, error) {
	if !vaultName.MatchString(s) {
		return s, nil
	}
	d, err := vaultsDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, s+".git"), nil
}

func newVaultsCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "vaults",
		Short: "List the named vaults, with their file count, last change and remotes",
		Long: `Vaults lists the vaults in $XDG_DATA_HOME/memvault (~/.local/share/memvault): the
default one and each named one. A --vault (or MEMVAULT_DIR) that is a plain name of
letters, digits, '-' and '_' names the vault $XDG_DATA_HOME/memvault/NAME.git, so each
project or agent can keep its own memory: --vault work, MEMVAULT_DIR=support-bot.
Anything else (with a '/' or a '.') is a folder path, as before.

It reads no memory file, so it needs no identity.`,
		Example: `  memvault vaults
  memvault --vault work init
  MEMVAULT_DIR=work memvault mcp`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runVaults(c.Context(), g, c.OutOrStdout())
		},
	}
}

func runVaults(ctx context.Context, g *globalOptions, out io.Writer) error {
	dir, err := vaultsDir()
	if err != nil {
		return err
	}
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(out, "no vaults in %s yet: 'memvault init' creates the default one, 'memvault --vault NAME init' a named one\n", dir)
		return nil
	}
	if err != nil {
		return fmt.Errorf("vaults: %w", err)
	}
	fmt.Fprintf(out, "%-20s %7s  %-20s  %s\n", "NAME", "FILES", "LAST CHANGE", "REMOTES")
	for _, e := range es {
		name, ok := strings.CutSuffix(e.Name(), ".git")
		if !e.IsDir() || !ok {
			continue
		}
		fmt.Fprintln(out, describeVault(ctx, g, name, filepath.Join(dir, e.Name())))
	}
	return nil
}

// describeVault is the line vaults prints for the vault at dir.
func describeVault(ctx context.Context, g *globalOptions, name, dir string) string {
	_, identity, err := g.paths()
	if err != nil {
		identity = ""
	}
	v, err := vault.Open(ctx, dir, g.options(identity))
	if err != nil {
		return fmt.Sprintf("%-20s cannot be opened: %s", escape.Name(name), escape.Text(err.Error()))
	}
	defer v.Close()
	files, last, remotes := "?", "never", "-"
	if snap, err := v.Snapshot(ctx); err == nil {
		if n, err := snap.FileCount(ctx); err == nil {
			files = fmt.Sprint(n)
		}
	}
	if rs, err := v.Log(ctx, vault.LogOptions{Limit: 1}); err == nil && len(rs) > 0 {
		last = rs[0].Time.Local().Format(time.DateTime)
	}
	if rs, err := v.Remotes(); err == nil && len(rs) > 0 {
		var names []string
		for _, r := range rs {
			names = append(names, r.Name+" "+r.URL)
		}
		remotes = strings.Join(names, ", ")
	}
	return fmt.Sprintf("%-20s %7s  %-20s  %s", escape.Name(name), files, last, escape.Name(remotes))
}
