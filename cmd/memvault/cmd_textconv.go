package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

func newTextconvCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "textconv FILE",
		Short: "Decrypt one memory blob for git diff and git log -p",
		Long: `Textconv prints the plaintext of FILE, the age ciphertext of one memory file as
git hands it over, decrypted with the identity. It is git's textconv driver for
memvault: in a clone of a vault, run once

  git config diff.memvault.textconv "memvault textconv"

and git log -p, git show and git diff print decrypted diffs for the memory files
(the vault's .gitattributes maps memories/** to the memvault diff driver). No vault
is opened: a sealed vault's files open through the key file and keychain the clone
checks out (.memvault/key, .memvault/keychain), and the plaintext only goes to git
through a pipe. Do not set
diff.memvault.cachetextconv: git would then store the plaintext in the clone.`,
		Example: `  git config diff.memvault.textconv "memvault textconv"
  git log -p -- memories/user_profile.md`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runTextconv(c.Context(), g, args[0], c.OutOrStdout())
		},
	}
}

func runTextconv(ctx context.Context, g *globalOptions, file string, out io.Writer) error {
	ct, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("textconv: %w", err)
	}
	_, identity, err := g.paths()
	if err != nil {
		return err
	}
	// A sealed vault's clone checks out its key file and keychain at the
	// top of its work tree, where git runs its textconv driver: a file of
	// format 3 opens through them.
	key, _ := os.ReadFile(filepath.Join(".memvault", "key"))
	chain, _ := os.ReadFile(filepath.Join(".memvault", "keychain"))
	plain, err := vault.DecryptSealed(g.options(identity), key, chain, ct)
	if err != nil {
		return err
	}
	if _, err := out.Write(plain); err != nil {
		return fmt.Errorf("textconv: write: %w", err)
	}
	return nil
}
