package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
)

func newRekeyCommand(g *globalOptions) *cobra.Command {
	var pq bool
	var pass newPassphraseFlags
	c := &cobra.Command{
		Use:   "rekey",
		Short: "Rotate the identity: a new key replaces the old one as a recipient",
		Long: `Rekey generates a new age key, re-encrypts every current memory file to it instead of
the identity's old key (one commit, as 'recipients add' and 'remove' would), then moves
the old identity file to IDENTITY.old and puts the new one in its place. An earlier
IDENTITY.old is kept as IDENTITY.old.1 (or .2, ...). Retired keys are never deleted:
the history before each rotation stays encrypted to them, and every command reads
with them beside the identity, so that history stays readable with nothing to add.

The new key is post-quantum if the old one was, or with --pq. It is protected by a
passphrase with --passphrase or --new-passphrase-file. Until the commit it waits in
IDENTITY.new: if rekey is interrupted, running it again goes on with that key.

Only identities memvault made can be rotated this way; for an SSH key, make a new one
with ssh-keygen, then 'recipients add' it and 'recipients remove' the old one.`,
		Example: `  memvault rekey
  memvault rekey --pq --passphrase`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runRekey(c.Context(), g, pq, &pass, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().BoolVar(&pq, "pq", false, "make the new key post-quantum (age1pq1…)")
	pass.register(c, "the new identity")
	return c
}

func runRekey(ctx context.Context, g *globalOptions, pq bool, pass *newPassphraseFlags, out, errOut io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	pw, err := pass.get("the new identity " + v.IdentityFile())
	if err != nil {
		return err
	}
	defer clear(pw)
	bar := newProgressBar(errOut)
	res, err := v.Rekey(ctx, vault.Meta{Agent: "memvault"}, vault.RekeyOptions{PostQuantum: pq, Passphrase: pw, Progress: bar.update})
	bar.done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(errOut, "memvault: run rekey again to go on from where it stopped")
		}
		return err
	}
	fmt.Fprintf(out, "identity   %s (new)\n", res.Identity.Path)
	fmt.Fprintf(out, "retired    %s\n", res.Retired)
	if res.Writer != "" {
		fmt.Fprintf(out, "writer     %s (new signing key; the old one is no longer a writer)\n", res.Writer)
	}
	printRecipientsResult(out, res.RecipientsResult)
	fmt.Fprintf(out, "The history before the rotation stays readable: memvault reads it with %s.\n", res.Retired)
	return nil
}
