package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

func newInitCommand(g *globalOptions) *cobra.Command {
	var sealed bool
	c := &cobra.Command{
		Use:   "init",
		Short: "Create a vault, and an identity if there is none",
		Long: `Init creates the vault (a bare git repository) and, when the identity file does not
exist yet, a new age X25519 identity (mode 0600) whose recipient the vault encrypts to.
It is safe to run again: an existing vault or identity is left as it is and init says so.
Init is optional: tool, serve, mcp, chat, ui and import create a missing vault (and
the identity, if there is none) on first use in the same way, and say so on stderr.

With --sealed the new vault is in the sealed format: its git host (and anyone reading a
clone without an identity) sees no file or folder name, commit subject, trailer, agent,
session or exact size, only sealed names and sizes rounded up to a bucket. memvault
shows everything opened. --sealed applies to a vault init creates; an existing vault
keeps its format.

Keep the identity safe and out of any repository: without it the memory cannot be read.`,
		Example: `  memvault init
  memvault init --sealed
  memvault --vault ~/vaults/work.git --identity ~/.config/memvault/work-identity init`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runInit(c.Context(), g, sealed, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&sealed, "sealed", false, "create the vault in the sealed format (names, messages and exact sizes hidden from its host)")
	return c
}

func runInit(ctx context.Context, g *globalOptions, sealed bool, out io.Writer) error {
	dir, identity, err := g.paths()
	if err != nil {
		return err
	}
	v, res, err := vault.Init(ctx, dir, vault.Options{IdentityFile: identity, Passphrase: g.passphrase, Sealed: sealed})
	if err != nil {
		return err
	}
	if err := v.Close(); err != nil {
		return err
	}
	vaultState, idState := "already exists", "already exists"
	switch {
	case res.VaultCreated && sealed:
		vaultState = "created, sealed"
	case res.VaultCreated:
		vaultState = "created"
	case sealed:
		vaultState = "already exists; --sealed only applies to a new vault, so its format is unchanged"
	}
	if res.IdentityCreated {
		idState = "created"
	}
	fmt.Fprintf(out, "vault      %s (%s)\n", dir, vaultState)
	fmt.Fprintf(out, "identity   %s (%s)\n", identity, idState)
	fmt.Fprintf(out, "recipient  %s\n", res.Recipient)
	if res.IdentityCreated {
		fmt.Fprintln(out, "\nKeep the identity safe and out of any repository: without it the memory cannot be read.")
	}
	if res.NotRecipient {
		fmt.Fprintln(out, "\nwarning: this identity is not among the vault's recipients, so it cannot read the vault.\n"+
			"Ask someone who can to run 'memvault recipients add "+res.Recipient+"', or point --identity\n"+
			"(or MEMVAULT_IDENTITY) at the identity the vault was made with.")
	}
	return nil
}
