package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	vaultDir string // --vault; "" means $MEMVAULT_DIR, then vault.DefaultDir
	// identity is --identity, once or more; none means $MEMVAULT_IDENTITY (a
	// list, separated as PATH is), then keys.DefaultIdentityFile. The first
	// is the identity; the others only read, as one set with it.
	identity []string
	// passphraseFile is --passphrase-file; "" means $MEMVAULT_PASSPHRASE_FILE, then a prompt.
	passphraseFile string
}

// Environment variables that stand in for the global flags.
const (
	envVault    = "MEMVAULT_DIR"
	envIdentity = "MEMVAULT_IDENTITY"
)

func newRootCommand() *cobra.Command {
	var g globalOptions
	root := &cobra.Command{
		Use:   "memvault",
		Short: "An encrypted, git-versioned store for Claude's memory tool",
		Long: `memvault keeps the memory of an AI agent safe. It is the application side of
Claude's memory tool (memory_20250818): every memory command the model sends becomes
an age-encrypted change committed to a local bare git repository, so the memory is
private at rest, and its history says what was written, when, and by which tool call.

The vault is found at --vault, else $MEMVAULT_DIR, else
$XDG_DATA_HOME/memvault/default.git. The identity (private key) that decrypts it is
read from --identity, else $MEMVAULT_IDENTITY, else $XDG_CONFIG_HOME/memvault/identity.`,
		Example: `  memvault demo                      # watch a scripted agent session on a throwaway vault
  memvault init                      # create your vault and identity
  echo '{"command":"view","path":"/memories"}' | memvault tool
  memvault log -n 10`,
		Version:       buildVersion(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().StringVar(&g.vaultDir, "vault", "",
		"the vault, a `DIR` or a plain NAME meaning $XDG_DATA_HOME/memvault/NAME.git (default $"+envVault+", else default)")
	root.PersistentFlags().StringArrayVar(&g.identity, "identity", nil,
		"the identity `FILE` that decrypts it; repeat it to read with several (default $"+envIdentity+", else $XDG_CONFIG_HOME/memvault/identity)")
	root.PersistentFlags().Bool("debug", false, "show errors whole, with the names of the packages they passed through")
	root.PersistentFlags().StringVar(&g.passphraseFile, "passphrase-file", "",
		"read a protected identity's passphrase from `FILE` (default $"+envPassphraseFile+", else ask on the terminal)")
	// A private key others can read is said at every command, not only by
	// fsck: whoever could read it can read the vault. The demo uses its own.
	root.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if c.Name() != "demo" {
			g.warnIdentity(c.ErrOrStderr())
		}
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{cmd: c.CommandPath(), err: err}
	})
	root.AddCommand(
		newInitCommand(&g),
		newToolCommand(&g),
		newServeCommand(&g),
		newCatCommand(&g),
		newLogCommand(&g),
		newDemoCommand(&g),
		newFsckCommand(&g),
		newGCCommand(&g),
		newMCPCommand(&g),
		newChatCommand(&g),
		newRecipientsCommand(&g),
		newWritersCommand(&g),
		newMembersCommand(&g),
		newJoinCommand(&g),
		newIdentityCommand(&g),
		newRekeyCommand(&g),
		newSealCommand(&g),
		newUICommand(&g),
		newExpireCommand(&g),
		newExportCommand(&g),
		newImportCommand(&g),
		newVaultsCommand(&g),
		newMountCommand(&g),
		newReviewCommand(&g),
	)
	root.AddCommand(historyCommands(&g)...)
	root.AddCommand(provenanceCommands(&g)...)
	root.AddCommand(append(newSyncCommands(&g), newRemoteCommand(&g))...)
	// A root called with no command, or an unknown one, is a usage error too.
	root.Args = usageArgs(cobra.NoArgs)
	root.RunE = func(c *cobra.Command, _ []string) error {
		return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("no command given")}
	}
	return root
}

// usageArgs wraps a cobra argument check so its failure is a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return &usageError{cmd: c.CommandPath(), err: err}
		}
		return nil
	}
}

// paths resolves where the vault and the identity are: flag, then environment, then default.
func (g *globalOptions) paths() (dir, identity string, err error) {
	dir = firstNonEmpty(g.vaultDir, os.Getenv(envVault))
	if dir, err = resolveVault(dir); err != nil {
		return "", "", err
	}
	if dir == "" {
		if dir, err = vault.DefaultDir(); err != nil {
			return "", "", fmt.Errorf("find the default vault: %w", err)
		}
	}
	if ids := g.identities(); len(ids) > 0 {
		identity = ids[0]
	}
	if identity == "" {
		if identity, err = keys.DefaultIdentityFile(); err != nil {
			return "", "", fmt.Errorf("find the default identity: %w", err)
		}
	}
	return dir, identity, nil
}

// identities are the identity files named by --identity, else by
// $MEMVAULT_IDENTITY, empty names left out.
func (g *globalOptions) identities() []string {
	list := g.identity
	if len(list) == 0 {
		list = filepath.SplitList(os.Getenv(envIdentity))
	}
	var out []string
	for _, p := range list {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// options are the vault options for the identity the global options name
// (from paths), with the further identities to read with.
func (g *globalOptions) options(identity string) vault.Options {
	var more []string
	if ids := g.identities(); len(ids) > 1 {
		more = ids[1:]
	}
	return vault.Options{IdentityFile: identity, ReadIdentities: more, Passphrase: g.passphrase}
}

// warnIdentity says on errOut when the identity file lets other users read it.
func (g *globalOptions) warnIdentity(errOut io.Writer) {
	_, identity, err := g.paths()
	if err != nil {
		return // the command itself reports it
	}
	for _, w := range keys.IdentityWarnings(identity) {
		fmt.Fprintf(errOut, "memvault: warning: %s\n", w)
	}
}

// open opens the vault the global options name.
func (g *globalOptions) open(ctx context.Context) (*vault.Vault, error) {
	dir, identity, err := g.paths()
	if err != nil {
		return nil, err
	}
	return vault.Open(ctx, dir, g.options(identity))
}

// closeVault closes v and, when the command had no error of its own, returns the
// close error through err. Commands defer it right after opening.
func closeVault(v *vault.Vault, err *error) {
	if cerr := v.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// memoryPath turns a command-line memory path into a canonical one. A path that does
// not start with "/" is taken under /memories, so "notes/a.md" is "/memories/notes/a.md".
func memoryPath(c *cobra.Command, arg string) (string, error) {
	p := arg
	if !strings.HasPrefix(p, "/") {
		p = vault.Root + "/" + p
	}
	clean, err := vault.CleanPath(p)
	if err != nil {
		return "", &usageError{cmd: c.CommandPath(), err: err} // the error names the path
	}
	return clean, nil
}
