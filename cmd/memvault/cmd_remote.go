package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault/escape"
)

func newRemoteCommand(g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "remote",
		Short: "Manage the git remotes the vault syncs with",
		Long: `A remote is a git repository (on any git host, or a local path) that holds a copy
of the vault. The host only ever sees ciphertext. URLs: https://host/owner/repo.git,
ssh://git@host/owner/repo.git or git@host:owner/repo.git, git://host/repo.git,
file:///path/to/repo.git or a plain path.`,
		Example: `  memvault remote add origin git@github.com:me/memory.git
  memvault remote list
  memvault remote remove origin`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runRemoteList(c.Context(), g, c.OutOrStdout())
		},
	}
	c.AddCommand(&cobra.Command{
		Use:   "add NAME URL",
		Short: "Add a remote",
		Args:  usageArgs(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, args []string) error {
			return runRemoteAdd(c.Context(), g, args[0], args[1])
		},
	}, &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove a remote",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runRemoteRemove(c.Context(), g, args[0])
		},
	}, &cobra.Command{
		Use:   "list",
		Short: "List the remotes",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runRemoteList(c.Context(), g, c.OutOrStdout())
		},
	})
	return c
}

func runRemoteAdd(ctx context.Context, g *globalOptions, name, url string) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	return v.AddRemote(name, url)
}

func runRemoteRemove(ctx context.Context, g *globalOptions, name string) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	return v.RemoveRemote(name)
}

func runRemoteList(ctx context.Context, g *globalOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	rs, err := v.Remotes()
	if err != nil {
		return err
	}
	for _, r := range rs {
		fmt.Fprintf(out, "%s\t%s\n", escape.Name(r.Name), escape.Name(r.URL))
	}
	return nil
}
