package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

func newInitCommand(g *globalOptions) *cobra.Command {
	var plain, sealed bool
	var name string
	c := &cobra.Command{
		Use:   "init",
		Short: "Create a vault, and an identity if there is none",
		Long: `Init creates the vault (a bare git repository) and, when the identity file does not
exist yet, a new age X25519 identity (mode 0600) whose recipient the vault encrypts to.
It is safe to run again: an existing vault or identity is left as it is and init says so.
Init is optional: tool, serve, mcp, chat, ui and import create a missing vault (and
the identity, if there is none) on first use in the same way, and say so on stderr.

A new vault is sealed: its git host (and anyone reading a clone without an identity)
sees no file or folder name, commit subject, trailer, agent, session or exact size,
only sealed names and sizes rounded up to a bucket. memvault shows everything opened.

With --plain the new vault is in the plain format instead: contents are encrypted, but
names, commit messages and exact sizes are readable on the host. Choose it when the
names must be readable with git alone (a host's web view, git log in a clone without
memvault), when a file or folder name is 144 to 255 bytes long (sealed names hold at
most 143), or for a little more speed. --sealed, the default, is still accepted. Either
flag applies to a vault init creates; an existing vault keeps its format.

With --name NAME you are a member of the new vault by that name, as 'memvault
members' lists it and as others add members; without it no name is recorded (never a
login or a host name).

Keep the identity safe and out of any repository: without it the memory cannot be read.`,
		Example: `  memvault init
  memvault init --name alice
  memvault init --plain
  memvault --vault ~/vaults/work.git --identity ~/.config/memvault/work-identity init`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			flag := ""
			switch {
			case plain && sealed:
				return &usageError{cmd: c.CommandPath(), err: errors.New("--plain and --sealed name two formats; give one")}
			case plain:
				flag = "--plain"
			case sealed:
				flag = "--sealed"
			}
			if name != "" {
				if err := keys.CheckMemberName(name); err != nil {
					return &usageError{cmd: c.CommandPath(), err: err}
				}
			}
			return runInit(c.Context(), g, plain, flag, name, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&name, "name", "", "the `NAME` you go by as a member of the new vault (none is recorded otherwise)")
	c.Flags().BoolVar(&plain, "plain", false, "create the vault in the plain format (names, messages and exact sizes readable on its host)")
	c.Flags().BoolVar(&sealed, "sealed", false, "create the vault in the sealed format, the default")
	return c
}

// runInit creates the vault, plain or sealed; flag is the format flag given
// ("" for none), named when it could not apply.
func runInit(ctx context.Context, g *globalOptions, plain bool, flag, name string, out io.Writer) error {
	dir, identity, err := g.paths()
	if err != nil {
		return err
	}
	v, res, err := vault.Init(ctx, dir, vault.Options{IdentityFile: identity, Passphrase: g.passphrase, Plain: plain, Name: name})
	if err != nil {
		return err
	}
	clearCloneFailed(dir)
	if err := v.Close(); err != nil {
		return err
	}
	vaultState, idState := "already exists", "already exists"
	switch {
	case res.VaultCreated && plain:
		vaultState = "created, plain"
	case res.VaultCreated:
		vaultState = "created, sealed"
	case flag != "":
		vaultState = "already exists; " + flag + " only applies to a new vault, so its format is unchanged"
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
