package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/tui"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

var _ tui.Vault = (*vault.Vault)(nil)

// errNoTerminal: the UI needs a terminal on both stdin and stdout.
var errNoTerminal = errors.New("the terminal UI needs a terminal: stdin and stdout must not be redirected")

func newUICommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "ui",
		Short: "Browse, diff and roll back the vault in a terminal UI",
		Long: `UI opens a full-screen terminal interface on the vault: the memory tree (directories
fold and unfold), the selected file with line numbers, and the history of the whole
vault or of the selected file, with each commit's time, command, path, agent and
tool-use id. A commit made by an agent while the UI is open shows up at once.

Selecting a commit shows its decrypted diff; space marks two commits to diff between
them, and v shows the selected file as it was at the selected commit. r restores the
selected file to the selected commit, t reverts that commit and R rolls the whole vault
back to it: each first says exactly what will change and asks, and each is a new commit,
itself undoable. c names a checkpoint.

P opens the agent's changes that wait for review ('memvault review'), with the chosen
one's diff and marks beside the list: space approves it onto main, d rejects it, a and
D approve or reject them all after asking.

Keys: j/k or the arrows move, enter opens, tab goes to the next pane, / filters the
tree by name and the history by path, command or message, f switches the history
between the whole vault and the selected file, esc backs out, ? lists every key, q
quits. The mouse wheel scrolls and a click selects.

The tree, the file sizes and the history need no identity; without a usable one the
UI says so where a file's content would be. NO_COLOR turns colours off.`,
		Example: `  memvault ui
  memvault --vault ~/agents/support.git ui`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runUI(c.Context(), g, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
}

func runUI(ctx context.Context, g *globalOptions, in io.Reader, out, errOut io.Writer) (err error) {
	if !isTerminal(in) || !isTerminal(out) {
		return errNoTerminal
	}
	_, identity, err := g.paths()
	if err != nil {
		return err
	}
	// A protected identity is unlocked before the UI takes the terminal, where
	// a prompt could not be answered; the vault then gets the passphrase given
	// here and never asks. A missing or wrong identity is no reason not to
	// start: the UI shows what it can and says what is wrong.
	pass := g.passphraseBefore(identity)
	v, err := g.openFace(ctx, errOut, pass)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	v.IndexHistory() // a long-lived process: its first per-file history answers at once
	return showUI(ctx, v, in, out)
}

// showUI runs the terminal UI on an open vault.
func showUI(ctx context.Context, v *vault.Vault, in io.Reader, out io.Writer) error {
	marks := func(p vault.PendingChange) []string {
		var out []string
		for _, m := range agent.Marks(p, v.Limits()) {
			out = append(out, m.Kind+": "+m.Why)
		}
		return out
	}
	return tui.Run(ctx, v, tui.Options{NoColor: os.Getenv("NO_COLOR") != "", Marks: marks}, in, out)
}

// passphraseBefore unlocks the identity at path now, asking for its passphrase
// if it has one, and returns what answers the vault's later requests: that
// passphrase, or an error wrapping vault.ErrPassphrase if none was asked for.
func (g *globalOptions) passphraseBefore(path string) func(string) ([]byte, error) {
	var mu sync.Mutex
	var pw []byte
	_, _ = keys.ReadIdentity(path, func(prompt string) ([]byte, error) {
		p, err := g.passphrase(prompt)
		if err == nil {
			pw = slices.Clone(p)
		}
		return p, err
	})
	return func(string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if pw == nil {
			return nil, fmt.Errorf("no passphrase was given before the UI started: %w", vault.ErrPassphrase)
		}
		return slices.Clone(pw), nil
	}
}
