package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
)

// transferFlags are the credentials flags of push, pull, sync and clone. A
// password or token is better given through $MEMVAULT_GIT_TOKEN (or
// $MEMVAULT_GIT_PASSWORD) than on the command line, where other users see it.
type transferFlags struct {
	auth gitlog.Auth
}

func (f *transferFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.auth.Username, "username", "", "the `USER` for https basic auth, or the ssh user (default $MEMVAULT_GIT_USERNAME)")
	c.Flags().StringVar(&f.auth.SSHKey, "ssh-key", "", "an ssh private key `FILE` instead of the ssh agent")
	c.Flags().StringVar(&f.auth.KnownHosts, "known-hosts", "", "a known_hosts `FILE` to check the ssh host against (default ~/.ssh/known_hosts)")
}

// progressTo is where the server's progress goes: stderr when it is a terminal,
// nowhere when piped.
func progressTo(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return w
	}
	return nil
}

func newSyncCommands(g *globalOptions) []*cobra.Command {
	mk := func(use string, mode vault.SyncMode, short, long string) *cobra.Command {
		var tf transferFlags
		var accept bool
		c := &cobra.Command{
			Use:   use + " [REMOTE]",
			Short: short,
			Long:  long,
			Args:  usageArgs(cobra.MaximumNArgs(1)),
			RunE: func(c *cobra.Command, args []string) error {
				opts := vault.SyncOptions{Mode: mode, Auth: tf.auth, AcceptRecipients: accept, Progress: progressTo(c.ErrOrStderr())}
				if len(args) == 1 {
					opts.Remote = args[0]
				}
				return runSync(c.Context(), g, opts, c.OutOrStdout())
			},
		}
		tf.register(c)
		if mode != vault.SyncPush {
			c.Flags().BoolVar(&accept, "accept-recipients", false, "take a change of the vault's recipients made on the remote")
		}
		return c
	}
	const merge = `When both sides changed the vault, the histories are merged on plaintext: a file
changed on one side takes that side; a file changed on both is decrypted, merged by
lines and encrypted again. Overlapping edits stay in the file between conflict
markers (<<<<<<< ours (host, time) / ======= / >>>>>>> theirs (remote, time)), so no
memory is lost; the merge commit names each such file. A change of the recipients
made on the remote is shown and taken only with --accept-recipients.

Credentials: https takes --username and $MEMVAULT_GIT_TOKEN or
$MEMVAULT_GIT_PASSWORD; ssh uses the ssh agent or --ssh-key, and checks the host in
~/.ssh/known_hosts (or --known-hosts).`
	return []*cobra.Command{
		mk("sync", vault.SyncBoth, "Fetch, merge and push: bring the vault and a remote together",
			"Sync fetches the remote's main branch (REMOTE, default origin), fast-forwards or\nmerges it, and pushes the result.\n\n"+merge),
		mk("pull", vault.SyncPull, "Fetch and merge a remote's changes, without pushing",
			"Pull fetches the remote's main branch and fast-forwards or merges it.\n\n"+merge),
		mk("push", vault.SyncPush, "Push the vault to a remote that is behind",
			"Push sends the vault's main branch to the remote. It refuses when the remote has\ncommits the vault lacks: run sync then."),
		newCloneCommand(g),
	}
}

func runSync(ctx context.Context, g *globalOptions, opts vault.SyncOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	res, err := v.Sync(ctx, opts)
	if res.RecipientsChanged {
		fmt.Fprintf(out, "The remote changed the vault's recipients to:\n%s", indent(res.Recipients))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s; head %.12s", res.Action, res.Head)
	if res.Pushed {
		fmt.Fprint(out, "; remote up to date")
	}
	fmt.Fprintln(out)
	for _, p := range res.Conflicts {
		fmt.Fprintf(out, "conflict: %s (both versions kept between markers; edit the file to settle it)\n", p)
	}
	return nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

func newCloneCommand(g *globalOptions) *cobra.Command {
	var tf transferFlags
	c := &cobra.Command{
		Use:   "clone URL [DIR]",
		Short: "Make a local vault from a remote one",
		Long: `Clone copies the vault at URL into DIR (default: --vault, $MEMVAULT_DIR, else the
default vault) and records URL as remote origin. Your identity must be one of the
vault's recipients; if it is not, clone says which recipient to ask someone to add.`,
		Example: `  memvault clone git@github.com:me/memory.git
  memvault clone https://git.example.com/me/memory.git ~/memory.git`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 2 {
				dir = args[1]
			}
			return runClone(c.Context(), g, args[0], dir, tf.auth, progressTo(c.ErrOrStderr()), c.OutOrStdout())
		},
	}
	tf.register(c)
	return c
}

func runClone(ctx context.Context, g *globalOptions, url, dir string, auth gitlog.Auth, progress, out io.Writer) error {
	defDir, identity, err := g.paths()
	if err != nil {
		return err
	}
	if dir == "" {
		dir = defDir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	v, err := vault.Clone(ctx, url, dir, vault.Options{IdentityFile: identity, Passphrase: g.passphrase}, auth, progress)
	if err != nil {
		return err
	}
	defer v.Close()
	fmt.Fprintf(out, "cloned %s into %s\n", gitlog.Redact(url), dir)
	return nil
}
