package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault/keys"
)

func newIdentityCommand(g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "identity",
		Short: "Create, show or protect the identity (private key)",
		Long: `The identity is the private key that decrypts the vault, at --identity, else
$MEMVAULT_IDENTITY, else $XDG_CONFIG_HOME/memvault/identity. It is an age identity file
(mode 0600), the same file protected by a passphrase, or an SSH private key
(ssh-ed25519 or ssh-rsa). It never goes into the vault.

A protected identity asks for its passphrase once per process: on the terminal, or
from --passphrase-file (or $MEMVAULT_PASSPHRASE_FILE) for automation.`,
		Args: usageArgs(cobra.NoArgs),
	}
	c.AddCommand(newIdentityNewCommand(g), newIdentityShowCommand(g), newIdentityPasswdCommand(g))
	return c
}

func newIdentityNewCommand(g *globalOptions) *cobra.Command {
	var pq bool
	var pass newPassphraseFlags
	c := &cobra.Command{
		Use:   "new",
		Short: "Create a new identity at the identity path",
		Long: `New generates an age key, X25519 by default or post-quantum (ML-KEM-768 + X25519)
with --pq, writes it to the identity path with mode 0600, and prints its public key.
It never replaces an existing file. Give the public key to whoever shares a vault with
you: they run 'memvault recipients add' with it.`,
		Example: `  memvault --identity ~/.config/memvault/work identity new --pq --passphrase
  memvault --identity bob identity new > bob.pub`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runIdentityNew(g, pq, &pass, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().BoolVar(&pq, "pq", false, "make a post-quantum key (age1pq1…)")
	pass.register(c, "the identity")
	return c
}

func runIdentityNew(g *globalOptions, pq bool, pass *newPassphraseFlags, out, errOut io.Writer) error {
	_, path, err := g.paths()
	if err != nil {
		return err
	}
	pw, err := pass.get("the new identity " + path)
	if err != nil {
		return err
	}
	defer clear(pw)
	info, err := keys.CreateIdentity(path, keys.IdentityOptions{PostQuantum: pq, Passphrase: pw})
	if err != nil {
		return err
	}
	state := "created"
	if info.Protected {
		state += ", protected by a passphrase"
	}
	fmt.Fprintf(errOut, "identity %s (%s); its public key:\n", path, state)
	fmt.Fprintln(out, info.Recipients[0].Key)
	return nil
}

func newIdentityShowCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Print the identity's public key",
		Long: `Show prints the public key of each secret key in the identity file, one a line, in
the form 'memvault recipients add' takes. A passphrase-protected age identity must be
unlocked for that; an encrypted SSH key need not be.`,
		Example: `  memvault identity show
  memvault recipients add "$(memvault --identity bob identity show)"`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runIdentityShow(g, c.OutOrStdout())
		},
	}
}

func runIdentityShow(g *globalOptions, out io.Writer) error {
	_, path, err := g.paths()
	if err != nil {
		return err
	}
	info, err := keys.ReadIdentity(path, g.passphrase)
	if err != nil {
		return err
	}
	for _, r := range info.Recipients {
		if r.Key == "" {
			return fmt.Errorf("identity %s is an age plugin identity (%s) whose file does not say its public key: ask the plugin", path, r.Type)
		}
		fmt.Fprintln(out, r.Key)
	}
	return nil
}

func newIdentityPasswdCommand(g *globalOptions) *cobra.Command {
	var remove bool
	var file string
	c := &cobra.Command{
		Use:   "passwd",
		Short: "Protect the identity with a passphrase, or change or remove it",
		Long: `Passwd rewrites the age identity file encrypted with a new passphrase (an armored age
file, as 'age -p -a' makes), asking for the current one first if it has one. With
--remove it writes the key back unprotected. The file stays mode 0600. An SSH key's
passphrase is changed with ssh-keygen -p instead.`,
		Example: `  memvault identity passwd
  memvault identity passwd --new-passphrase-file /run/secrets/memvault`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runIdentityPasswd(c.Context(), g, remove, file, c.ErrOrStderr())
		},
	}
	c.Flags().BoolVar(&remove, "remove", false, "remove the passphrase: store the key unprotected")
	c.Flags().StringVar(&file, "new-passphrase-file", "", "read the new passphrase from `FILE` instead of the terminal")
	return c
}

func runIdentityPasswd(_ context.Context, g *globalOptions, remove bool, file string, errOut io.Writer) error {
	_, path, err := g.paths()
	if err != nil {
		return err
	}
	newPass := func() ([]byte, error) {
		if remove {
			return nil, nil
		}
		return newPassphrase(file, "the identity "+path)
	}
	if err := keys.SetPassphrase(path, g.passphrase, newPass); err != nil {
		return err
	}
	if remove {
		fmt.Fprintf(errOut, "identity %s is no longer protected by a passphrase\n", path)
	} else {
		fmt.Fprintf(errOut, "identity %s is protected by the new passphrase\n", path)
	}
	return nil
}
