package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

func newInitCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create a vault, and an identity if there is none",
		Long: `Init creates the vault (a bare git repository) and, when the identity file does not
exist yet, a new age X25519 identity (mode 0600) whose recipient the vault encrypts to.
It is safe to run again: an existing vault or identity is left as it is and init says so.
Init is optional: tool, serve, mcp, chat, ui and import create a missing vault (and
the identity, if there is none) on first use in the same way, and say so on stderr.

Keep the identity safe and out of any repository: without it the memory cannot be read.`,
		Example: `  memvault init
  memvault --vault ~/vaults/work.git --identity ~/.config/memvault/work-identity init`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runInit(c.Context(), g, c.OutOrStdout())
		},
	}
}

func runInit(ctx context.Context, g *globalOptions, out io.Writer) error {
	dir, identity, err := g.paths()
	if err != nil {
		return err
	}
	v, res, err := vault.Init(ctx, dir, vault.Options{IdentityFile: identity, Passphrase: g.passphrase})
	if err != nil {
		return err
	}
	if err := v.Close(); err != nil {
		return err
	}
	vaultState, idState := "already exists", "already exists"
	if res.VaultCreated {
		vaultState = "created"
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
