package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/clonetrust"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/keys"
)

const membersHelp = `A member is a person or a machine that shares the vault: a name they chose, a
reader key and, unless they only read, a signing key. 'memvault join URL --name NAME'
prints a newcomer's member line; a writer of the vault adds it with 'memvault members
add LINE', one commit that makes the member a reader and a writer, and pushes it; the
newcomer then runs the join command that printed, which clones the vault and trusts
only a history that writer signed.

'memvault members remove NAME' removes a member in one commit: their reader key and
their signing key, which is listed among the removed writers so that a commit they
sign later is refused whatever it builds on. In the sealed format (the default) the
vault key rotates: they read nothing written after, on any clone. A member added later
reads the whole history of a sealed vault (the older vault keys are sealed under the
current one); in the plain format, what is current and what comes after.

'memvault recipients' and 'memvault writers' are the lower level: keys without names.`

func newMembersCommand(g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "members",
		Short: "List, add or remove the vault's members: who reads and who writes",
		Long:  membersHelp,
		Example: `  memvault members
  memvault members add 'memvault-member/v1 bob age1… ssh-ed25519:AAAA…'
  memvault members add 'memvault-member/v1 ci age1… -' --read-only
  memvault members remove bob`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return runMembersList(c.Context(), g, c.OutOrStdout()) },
	}
	var readOnly bool
	var tf transferFlags
	add := &cobra.Command{
		Use:   "add LINE",
		Short: "Add a member from the line 'memvault join' printed, in one commit, and push it",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			m, err := keys.ParseMember(args[0])
			if err != nil {
				return &usageError{cmd: c.CommandPath(), err: err}
			}
			return runMembersChange(c.Context(), g, tf, c.OutOrStdout(), func(ctx context.Context, v *vault.Vault) (string, error) {
				bar := newProgressBar(c.ErrOrStderr())
				_, err := v.AddMember(ctx, vault.Meta{Agent: "memvault"}, m, readOnly, bar.update)
				bar.done()
				if err != nil {
					return "", err
				}
				what := "read and write"
				if readOnly || m.Writer == nil {
					what = "read"
				}
				return fmt.Sprintf("%s is a member: they %s the vault", escape.Name(m.Name), what), nil
			}, true)
		},
	}
	add.Flags().BoolVar(&readOnly, "read-only", false, "the member reads and does not write, whatever the line holds")
	tf.register(add)
	var rtf transferFlags
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a member's reader and signing keys in one commit, rotate the vault key, and push it",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			return runMembersChange(c.Context(), g, rtf, c.OutOrStdout(), func(ctx context.Context, v *vault.Vault) (string, error) {
				bar := newProgressBar(c.ErrOrStderr())
				_, err := v.RemoveMember(ctx, vault.Meta{Agent: "memvault"}, args[0], bar.update)
				bar.done()
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("%s is no longer a member: they read nothing written from now on, and a commit they sign is refused", escape.Name(args[0])), nil
			}, false)
		},
	}
	rtf.register(remove)
	c.AddCommand(add, remove)
	return c
}

func runMembersList(ctx context.Context, g *globalOptions, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	ms, err := v.Members(ctx)
	if err != nil {
		return err
	}
	mine, _ := v.SigningWriter()
	fmt.Fprintf(out, "%-20s %-5s %-5s %-10s %s\n", "NAME", "READS", "WRITES", "SINCE", "KEYS")
	for _, m := range ms {
		name := m.Name
		if name == "" {
			name = "(no name)"
		}
		var ks []string
		for _, r := range m.Readers {
			ks = append(ks, keys.Abbrev(r.Key))
		}
		you := ""
		for _, w := range m.Writers {
			ks = append(ks, w.Fingerprint)
			if w.Key == mine.Key {
				you = "  (you)"
			}
		}
		fmt.Fprintf(out, "%-20s %-5s %-6s %-10s %s%s\n", escape.Name(name), yesNo(len(m.Readers) > 0), yesNo(len(m.Writers) > 0),
			m.Since.UTC().Format(time.DateOnly), escape.Name(strings.Join(ks, ", ")), you)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// runMembersChange opens the vault, runs change (one commit) and says what it
// did; when the vault has a remote origin, it pushes the change there at
// once, for the newcomer or against the removed member. With tellJoin it
// prints the command that finishes a newcomer's join: it names this writer's
// signing key, the one the newcomer's clone will trust.
func runMembersChange(ctx context.Context, g *globalOptions, tf transferFlags, out io.Writer, change func(context.Context, *vault.Vault) (string, error), tellJoin bool) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	said, err := change(ctx, v)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, said)
	url := ""
	if rs, err := v.Remotes(); err == nil {
		for _, r := range rs {
			if r.Name == vault.DefaultRemote {
				url = r.URL
			}
		}
	}
	if url == "" {
		fmt.Fprintln(out, "This vault has no remote origin: add one ('memvault remote add origin URL') and sync to share the change.")
		return nil
	}
	tctx, cancel := withTimeout(ctx, tf.timeout)
	defer cancel()
	if _, err := v.Sync(tctx, vault.SyncOptions{Auth: tf.credentials(), Progress: progressTo(out)}); err != nil {
		return fmt.Errorf("the change is committed here, and the push to origin failed (run 'memvault sync' to push it): %w", gaveUpAfter(tctx, tf.timeout, err))
	}
	fmt.Fprintf(out, "pushed to %s\n", escape.Name(url))
	if tellJoin {
		me, err := v.SigningWriter()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Tell them to run:\n  memvault join %s --expect-writer %s\n", shellQuote(url), me.Fingerprint)
	}
	return nil
}

func newJoinCommand(g *globalOptions) *cobra.Command {
	var name string
	var expect []string
	var tf transferFlags
	c := &cobra.Command{
		Use:   "join URL [DIR]",
		Short: "Join a shared vault: print your member line, then clone once a writer added you",
		Long: `Join is how a newcomer joins a vault another person shares. The first time, with
--name, it makes your identity and signing key if you have none and prints your member
line: send it to a writer of the vault, who runs 'memvault members add LINE'. That prints
the command you run next, which names their signing key:

  memvault join URL --expect-writer SHA256:…

It clones the vault into DIR (default: --vault, $MEMVAULT_DIR, else the default vault)
and takes its history only when the writer you named signed it (or a commit after it):
a history the host made up is refused. The readers and writers the vault lists are
taken as that writer's history sets them. Until you are added, join says so and prints
your line again; nothing is left behind.

` + transferHelp,
		Example: `  memvault join git@github.com:alice/memory.git --name bob
  memvault join git@github.com:alice/memory.git --expect-writer SHA256:8c0x…`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, args []string) error {
			if name != "" {
				if err := keys.CheckMemberName(name); err != nil {
					return &usageError{cmd: c.CommandPath(), err: err}
				}
			}
			for _, k := range expect {
				if err := clonetrust.CheckWriter(k); err != nil {
					return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("--expect-writer %w", err)}
				}
			}
			dir := ""
			if len(args) == 2 {
				dir = args[1]
			}
			return runJoin(c.Context(), g, args[0], dir, name, expect, tf, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&name, "name", "", "the `NAME` you go by in the vault (letters, digits and ._@+-)")
	c.Flags().StringArrayVar(&expect, "expect-writer", nil, "the `FINGERPRINT` of the writer who added you, as 'memvault members add' printed it")
	tf.register(c)
	return c
}

// runJoin prints the newcomer's member line, or clones the vault once a
// pinned writer's history lists them.
func runJoin(ctx context.Context, g *globalOptions, url, dir, name string, expect []string, tf transferFlags, out, errOut io.Writer) error {
	defDir, identity, err := g.paths()
	if err != nil {
		return err
	}
	if dir == "" {
		dir = defDir
	}
	info, err := ensureIdentity(identity, g.passphrase, errOut)
	if err != nil {
		return err
	}
	signer, err := keys.LoadSigner(identity, keys.Passphrases{Ask: g.passphrase})
	if err != nil {
		return err
	}
	line := func() string {
		n := name
		if n == "" {
			n = "NAME"
		}
		w := keys.WriterOf(signer.PublicKey(), "")
		return keys.Member{Name: n, Reader: info.Recipients[0], Writer: &w}.Line()
	}
	printLine := func(why string) error {
		if name == "" {
			return &hintedError{
				err:  fmt.Errorf("join: %s; give the name you go by with --name to print your member line", why),
				hint: "Run: memvault join " + shellQuote(url) + " --name YOURNAME",
			}
		}
		fmt.Fprintf(out, "%s. Send this line to a writer of the vault:\n\n  %s\n\n", why, line())
		fmt.Fprintf(out, "They run:  memvault members add '%s'\nwhich prints the command that finishes your join (memvault join %s --expect-writer …).\n", line(), shellQuote(url))
		return nil
	}
	if len(expect) == 0 {
		return printLine("To join, a writer must add you")
	}
	pins := clonetrust.Pins(expect)
	tctx, cancel := withTimeout(ctx, tf.timeout)
	defer cancel()
	v, _, err := vault.Clone(tctx, url, dir, g.options(identity), vault.CloneOptions{
		Auth: tf.credentials(), Progress: progressTo(errOut), ExpectWriters: pins,
	})
	if errors.Is(err, vault.ErrNotRecipient) {
		return printLine("You are not a member of that vault yet")
	}
	if err != nil {
		markCloneFailed(dir, url, err)
		return gaveUpAfter(tctx, tf.timeout, err)
	}
	defer v.Close()
	clearCloneFailed(dir)
	fmt.Fprintf(out, "joined: cloned %s into %s\n", escape.Name(gitlogRedacted(v)), dir)
	if ws, _, err := v.Writers(ctx); err == nil {
		mine := false
		for _, w := range ws {
			mine = mine || w.Fingerprint == keys.WriterOf(signer.PublicKey(), "").Fingerprint
		}
		if !mine {
			fmt.Fprintln(out, "You read this vault and do not write it: a writer added you as a reader only.")
		}
	}
	return nil
}

// ensureIdentity reads the identity at path, or makes one when there is none
// (as init does), saying so on errOut.
// An identity that is there and cannot be read is an error, never replaced.
func ensureIdentity(path string, pass func(string) ([]byte, error), errOut io.Writer) (keys.IdentityInfo, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return keys.ReadIdentity(path, pass)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return keys.IdentityInfo{}, err
	}
	info, err := keys.CreateIdentity(path, keys.IdentityOptions{})
	if err != nil {
		return info, err
	}
	fmt.Fprintf(errOut, "memvault: created the identity %s (recipient %s)\n"+
		"memvault: keep it safe and out of any repository: without it the memory cannot be read\n", path, info.Recipients[0].Key)
	return info, nil
}

// gitlogRedacted is the URL of v's origin as the vault keeps it: any password
// in it redacted.
func gitlogRedacted(v *vault.Vault) string {
	if rs, err := v.Remotes(); err == nil {
		for _, r := range rs {
			if r.Name == vault.DefaultRemote {
				return r.URL
			}
		}
	}
	return "the remote"
}
