package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/keys"
)

func newWritersCommand(g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "writers",
		Short: "List, add or remove the keys whose commits the vault believes",
		Long: `A vault's .memvault/writers lists the SSH keys that may write it. Every commit
memvault makes is signed by its writer, as git signs with gpg.format=ssh, and a commit
that arrives by sync or clone is taken only when a writer listed in its parents signed
it: whoever runs the git host, or knows only the public recipients, cannot put words in
the agent's memory, change who may read or write, or make blame lie. Changing the list
takes a writer too. A recipient who is not a writer can read and not write.

An age identity signs with an ed25519 key kept beside it (IDENTITY.signing, made with
it, under its passphrase); an SSH identity signs with itself. 'memvault writers me'
prints yours, to give to a writer of a vault you should write.

A change of writers arriving from a remote is shown and taken only with sync
--accept-writers. A vault made before writers existed takes any commit until
'memvault writers init' starts the list with your key.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return runWritersList(c.Context(), g, c.OutOrStdout()) },
	}
	change := func(use, short string, add bool) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  usageArgs(cobra.MinimumNArgs(1)),
			RunE: func(c *cobra.Command, args []string) error {
				return runWritersChange(c.Context(), g, args, add, c.OutOrStdout())
			},
		}
	}
	add := change("add KEY...", "Add writers: a key line (ssh-ed25519 AAAA… name) or a .pub file each", true)
	remove := change("remove KEY...", "Remove writers, by key or fingerprint (SHA256:…)", false)
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Start the writers list of a vault made before writers, with your key",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runWritersChange(c.Context(), g, nil, true, c.OutOrStdout())
		},
	}
	me := &cobra.Command{
		Use:   "me",
		Short: "Print your signing key as a writer line, to give to a writer of a vault",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) (err error) {
			// The identity's signing key alone: no vault is needed (a
			// newcomer has none yet; 'memvault join' prints the whole line).
			_, identity, err := g.paths()
			if err != nil {
				return err
			}
			signer, err := keys.LoadSigner(identity, keys.Passphrases{Ask: g.passphrase})
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), writerKeyLine(keys.WriterOf(signer.PublicKey(), "")))
			return nil
		},
	}
	c.AddCommand(add, remove, initCmd, me)
	return c
}

func runWritersList(ctx context.Context, g *globalOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	ws, has, err := v.Writers(ctx)
	if err != nil {
		return err
	}
	if !has {
		fmt.Fprintln(out, "This vault has no writers list: it takes any commit that arrives. 'memvault writers init' starts one with your key.")
		return nil
	}
	mine, _ := v.SigningWriter()
	for _, w := range ws {
		line := escape.Name(w.Fingerprint) + "  " + writerKeyLine(w)
		if w.Key == mine.Key {
			line += "  (you)"
		}
		fmt.Fprintln(out, line)
	}
	return nil
}

func runWritersChange(ctx context.Context, g *globalOptions, args []string, add bool, out io.Writer) (err error) {
	var adds []keys.Writer
	var removes []string
	for _, a := range args {
		if !add {
			removes = append(removes, strings.TrimSpace(a))
			continue
		}
		line := a
		if data, err := os.ReadFile(a); err == nil && !strings.HasPrefix(a, "ssh-") {
			line = strings.TrimSpace(string(data))
		}
		w, err := keys.ParseWriter(line)
		if err != nil {
			return err
		}
		adds = append(adds, w)
	}
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	ws, err := v.ChangeWriters(ctx, vault.Meta{Command: "writers"}, adds, removes)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the vault now has %d writers; sync to share the change\n", len(ws))
	for _, w := range ws {
		fmt.Fprintf(out, "  %s  %s\n", escape.Name(w.Fingerprint), escape.Name(w.Comment))
	}
	return nil
}

// writerLine is a writer as its line in the writers file, escaped.
func writerKeyLine(w keys.Writer) string {
	s := escape.Name(w.Key)
	if w.Comment != "" {
		s += " " + escape.Name(w.Comment)
	}
	return s
}

// writeWritersNotice lists the keys a change of writers from the remote adds
// and removes.
func writeWritersNotice(out io.Writer, res vault.SyncResult, taken bool) {
	if taken {
		fmt.Fprintln(out, "The remote changed who may write the vault (taken, with --accept-writers):")
	} else {
		fmt.Fprintln(out, "The remote changed who may write the vault (not taken):")
	}
	for _, w := range res.WritersAdded {
		fmt.Fprintf(out, "  added    %s  %s\n", escape.Name(w.Fingerprint), writerKeyLine(w))
	}
	for _, w := range res.WritersRemoved {
		fmt.Fprintf(out, "  removed  %s  %s\n", escape.Name(w.Fingerprint), writerKeyLine(w))
	}
}
