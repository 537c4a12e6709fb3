package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

func newRecipientsCommand(g *globalOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "recipients",
		Short: "List, add or remove the keys the vault is encrypted to",
		Long: `Every memory file is encrypted to each recipient in the vault's .memvault/recipients:
age keys (age1…), post-quantum age keys (age1pq1…), SSH keys (ssh-ed25519, ssh-rsa) and
age plugin keys (age1yubikey1… and others, which need the plugin program on PATH).
A vault's keys must be all post-quantum or none: age will not mix them.

Adding or removing a key re-encrypts every current memory file in one commit. History
is never rewritten: the files of earlier commits stay encrypted to the keys of their
time, so whoever could read them then still can.`,
		Args: usageArgs(cobra.NoArgs),
	}
	c.AddCommand(newRecipientsListCommand(g), newRecipientsChangeCommand(g, true), newRecipientsChangeCommand(g, false))
	return c
}

func newRecipientsListCommand(g *globalOptions) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "Print the keys the vault is encrypted to",
		Long: `List prints each recipient of the vault on its own line: its type, the key, and its
comment when it has one. It needs no identity.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runRecipientsList(c.Context(), g, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line")
	return c
}

func runRecipientsList(ctx context.Context, g *globalOptions, asJSON bool, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return err
	}
	rs, err := snap.Recipients(ctx)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if asJSON {
			rec := map[string]any{"key": r.Key, "type": r.Type, "comment": r.Comment, "post_quantum": r.PostQuantum}
			if err := writeRecordJSON(out, "recipients", rec); err != nil {
				return err
			}
			continue
		}
		line := fmt.Sprintf("%-14s %s", escape.Name(r.Type), escape.Name(r.Key))
		if r.Comment != "" {
			line += "  # " + escape.Name(r.Comment)
		}
		fmt.Fprintln(out, line)
	}
	return nil
}

func newRecipientsChangeCommand(g *globalOptions, add bool) *cobra.Command {
	var comment string
	use, short, example := "remove KEY|FILE...", "Remove keys and re-encrypt every memory file",
		"  memvault recipients remove age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs7k5ep\n  memvault recipients remove ~/.ssh/old_laptop.pub"
	if add {
		use, short, example = "add KEY|FILE...", "Add keys and re-encrypt every memory file",
			"  memvault recipients add age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs7k5ep --comment 'bob laptop'\n  memvault recipients add ~/.ssh/id_ed25519.pub\n  memvault --identity bob-identity identity show > bob.pub && memvault recipients add bob.pub"
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long: `Each argument is a key (age1…, age1pq1…, an age plugin key, or an SSH public key line
in quotes) or a file of keys, one a line, such as an SSH .pub file or another vault's
recipients file. The identity in use must be able to read the vault, and stay able to:
removing your own last key is refused.

Every current memory file is decrypted and encrypted to the new set of keys, on every
core, and committed at once. If that is interrupted, running the same command again
goes on where it stopped.`,
		Example: example,
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			keys, err := recipientArgs(args)
			if err != nil {
				return &usageError{cmd: c.CommandPath(), err: err}
			}
			ch := vault.RecipientChange{Comment: comment}
			if add {
				ch.Add = keys
			} else {
				ch.Remove = keys
			}
			return runRecipientsChange(c.Context(), g, ch, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	if add {
		c.Flags().StringVar(&comment, "comment", "", "write `TEXT` as a comment above the added keys")
	}
	return c
}

// recipientArgs turns arguments into keys: a file's non-comment lines, or the
// argument itself. "ssh-ed25519 AAAA…" split by the shell is joined again.
func recipientArgs(args []string) ([]string, error) {
	var keys []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "ssh-ed25519" || a == "ssh-rsa") && i+1 < len(args) {
			keys = append(keys, a+" "+args[i+1])
			i++
			continue
		}
		if strings.HasPrefix(a, "age1") || strings.HasPrefix(a, "ssh-") {
			keys = append(keys, a)
			continue
		}
		f, err := os.Open(a)
		if err != nil {
			return nil, fmt.Errorf("%s is neither a key nor a readable file of keys", a)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				keys = append(keys, l)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", a, err)
		}
	}
	return keys, nil
}

func runRecipientsChange(ctx context.Context, g *globalOptions, ch vault.RecipientChange, out, errOut io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	bar := newProgressBar(errOut)
	ch.Progress = bar.update
	res, err := v.ChangeRecipients(ctx, vault.Meta{Agent: "memvault"}, ch)
	bar.done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(errOut, "memvault: run the same command again to go on from where it stopped")
		}
		return err
	}
	printRecipientsResult(out, res)
	return nil
}

// printRecipientsResult says what changed and what it means for history.
func printRecipientsResult(out io.Writer, res vault.RecipientsResult) {
	for _, r := range res.Added {
		fmt.Fprintf(out, "added      %s  (%s)\n", r.Key, r.Type)
	}
	for _, r := range res.Removed {
		fmt.Fprintf(out, "removed    %s  (%s)\n", r.Key, r.Type)
	}
	if res.Commit == "" {
		fmt.Fprintln(out, "nothing to change: the vault already has these recipients")
		return
	}
	resumed := ""
	if res.Resumed > 0 {
		resumed = fmt.Sprintf(", %d of them done by the interrupted run before", res.Resumed)
	}
	if res.Files == 0 && len(res.Removed) == 0 {
		// A sealed vault wraps its key anew: the files are encrypted to the
		// key's generation, which the new keys open through it.
		fmt.Fprintf(out, "the vault key is wrapped for the new keys in commit %s: they read every file, and the sealed history\n", res.Commit[:12])
		return
	}
	fmt.Fprintf(out, "re-encrypted %d memory files in commit %s%s\n", res.Files, res.Commit[:12], resumed)
	fmt.Fprintln(out, "\nHistory is not rewritten: files as they were before this commit stay encrypted to")
	fmt.Fprintln(out, "the keys of their time, so whoever could read them then still can.")
	if len(res.Removed) > 0 {
		fmt.Fprintln(out, "A removed key cannot read anything written from now on. If it leaked, treat what it")
		fmt.Fprintln(out, "could read as known.")
	}
}
