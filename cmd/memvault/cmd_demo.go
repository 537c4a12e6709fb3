package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
)

// demoOptions are the flags of `memvault demo`.
type demoOptions struct {
	keep bool
	noUI bool // end with the transcript, not in the UI
}

// Who the demo's commits say made them.
const demoAgent = "demo-agent"

func newDemoCommand(g *globalOptions) *cobra.Command {
	var opts demoOptions
	c := &cobra.Command{
		Use:   "demo",
		Short: "Replay a scripted agent session on a throwaway vault",
		Long: `Demo shows memvault at work without touching your own vault or identity. It creates
a vault in a new temporary directory, with its own identity inside that directory, and
replays three sessions of an agent that uses the memory tool the way Claude does: it
looks at its memory first, keeps a user profile and a progress log, edits, moves and
deletes notes, and runs into errors (a missing file, a duplicate create, an ambiguous
str_replace, a path that tries to leave /memories). Every call is printed with its input
and its answer, then the vault's history.

The temporary directory is removed at exit unless --keep is given. With --vault DIR the
vault goes in DIR instead (it must be new or empty) and its identity beside it in
DIR.identity, and both are kept. MEMVAULT_DIR, MEMVAULT_IDENTITY and --identity are
ignored, so the demo never writes into your own vault or reads your identity.

After the sessions it shows the history, one commit's decrypted diff, one undo (a
revert of the agent's delete, itself a new commit), and what the disk holds: a bare
git repository of ciphertext, and git's own view of it (sealed names and messages,
when git is installed).

When stdin and stdout are a terminal, the demo then asks whether to open the
terminal UI (see memvault ui) on its vault; q quits it. --no-ui never asks.`,
		Example: `  memvault demo
  memvault demo --keep | less
  memvault demo --vault /tmp/demo.git && memvault --vault /tmp/demo.git log`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), g, opts, c.InOrStdin(), c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&opts.keep, "keep", false, "keep the temporary vault and print where it is")
	c.Flags().BoolVar(&opts.noUI, "no-ui", false, "print the transcript only; do not offer the UI at the end")
	return c
}

func runDemo(ctx context.Context, g *globalOptions, opts demoOptions, in io.Reader, out io.Writer) (err error) {
	dir, identity, temp, err := demoPlaces(g.vaultDir)
	if err != nil {
		return err
	}
	kept := !temp || opts.keep
	if !kept {
		defer func() {
			if rerr := os.RemoveAll(filepath.Dir(dir)); rerr != nil && err == nil {
				err = fmt.Errorf("demo: remove the temporary vault: %w", rerr)
			}
		}()
	}
	v, _, err := vault.Init(ctx, dir, vault.Options{IdentityFile: identity})
	if err != nil {
		return err
	}
	defer closeVault(v, &err)

	p := demoPrinter{out: out, st: stylesFor(out)}
	p.intro(dir, identity, kept)
	calls, errs := 0, 0
	for i, conv := range demoScript {
		h := agent.New(agent.Vault(v), agent.Options{Agent: demoAgent, Session: fmt.Sprintf("demo-%d", i+1)})
		n, e, err := playConversation(ctx, h, i, conv, p)
		calls, errs = calls+n, errs+e
		if err != nil {
			return err
		}
	}
	recs, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		return err
	}
	if err := p.history(recs, calls, errs); err != nil {
		return err
	}
	if err := demoDiff(ctx, v, recs, p); err != nil {
		return err
	}
	if err := demoUndo(ctx, v, recs, p); err != nil {
		return err
	}
	if err := demoDisk(ctx, v, p); err != nil {
		return err
	}
	ui := !opts.noUI && isTerminal(in) && isTerminal(out)
	self := selfCommand()
	if ui && p.askUI(in) {
		p.ending(self, dir, identity, kept, true)
		fmt.Fprintln(out, "\nOpening the terminal UI on the demo vault (q quits)…")
		return showUI(ctx, v, in, out)
	}
	p.ending(self, dir, identity, kept, false)
	return nil
}

// playConversation runs one conversation's calls, printing each, and checks that every
// answer is an error exactly when the script expects one.
func playConversation(ctx context.Context, h *agent.Handler, i int, conv demoConversation, p demoPrinter) (calls, errs int, err error) {
	p.conversation(i, conv)
	for j, s := range conv.steps {
		id := fmt.Sprintf("toolu_demo%d_%02d", i+1, j+1)
		ans, err := h.Run(ctx, s.input, id)
		if err != nil {
			return calls, errs, err
		}
		calls++
		if ans.IsError {
			errs++
		}
		p.step(fmt.Sprintf("%d.%02d", i+1, j+1), s, ans)
		if ans.IsError != s.fails {
			return calls, errs, fmt.Errorf("demo: call %d.%02d (%s): is_error is %t, the script expects %t",
				i+1, j+1, s.summary, ans.IsError, s.fails)
		}
	}
	return calls, errs, nil
}

// demoPlaces says where the demo's vault and identity go. With no flagDir they go
// in a new temporary directory, as vault.git and identity. With flagDir (new or
// empty) the vault goes there and its identity beside it, as flagDir.identity.
func demoPlaces(flagDir string) (dir, identity string, temp bool, err error) {
	if flagDir == "" {
		base, err := os.MkdirTemp("", "memvault-demo-")
		if err != nil {
			return "", "", false, fmt.Errorf("demo: make a temporary directory: %w", err)
		}
		return filepath.Join(base, "vault.git"), filepath.Join(base, "identity"), true, nil
	}
	dir = filepath.Clean(flagDir)
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", "", false, fmt.Errorf("demo: %w", err)
	case len(entries) > 0:
		return "", "", false, fmt.Errorf("demo: %s is not empty; give the demo a new or empty directory", dir)
	}
	return dir, dir + ".identity", false, nil
}
