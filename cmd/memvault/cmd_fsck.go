package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// errFsckProblems reports that fsck found something wrong; the list is on stdout.
var errFsckProblems = errors.New("the vault has problems (listed above)")

func newFsckCommand(g *globalOptions) *cobra.Command {
	var repair bool
	c := &cobra.Command{
		Use:   "fsck",
		Short: "Check the vault's history, objects and encryption",
		Long: `Fsck checks that the main branch and every commit, tree and blob reachable from it
are present and sound, that every memory blob in the whole history is age ciphertext
(no plaintext was ever stored), that every current memory file decrypts with the
identity, that the vault's recipients and format files parse, and that the identity
file is readable by you alone. It prints each problem and exits with status 1 when
there is any.

On Linux it also notes what would let decrypted memories leave memory, as it
would for any memvault started the same way: a process left dumpable (a crash
could write a core dump), and, when the system has swap on, memory that is not
locked against it (which needs the memlock limit unlimited: ulimit -l
unlimited). Notes do not change the exit status.

Every commit of the history is also checked as sync checks what a remote brings
(layout, modes, names, age files within the size limit, format): each entry it
would refuse is one line with its commit and path. Such entries come from a
vault changed by hand with git, or filled before sync checked what arrives.

With --repair, a main branch that is unreadable or names a broken commit is pointed
at the newest commit whose whole history is sound; and, as sync --skip-refused
does for a remote, one commit leaves the refused entries out of the current tree
and names each of them, after which fsck no longer lists them. Nothing is ever
deleted from the history.`,
		Example: `  memvault fsck
  memvault fsck --repair`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runFsck(c.Context(), g, repair, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&repair, "repair", false, "point a broken main branch at the newest sound commit, and leave refused entries out")
	return c
}

func runFsck(ctx context.Context, g *globalOptions, repair bool, out io.Writer) (err error) {
	if repair {
		dir, _, err := g.paths()
		if err != nil {
			return err
		}
		fixed, err := vault.RepairAt(ctx, dir)
		if err != nil {
			return err
		}
		if fixed != "" {
			fmt.Fprintf(out, "repaired: main now points at %s, the newest sound commit\n", fixed)
		}
	}
	v, err := g.open(ctx)
	if errors.Is(err, vault.ErrDamaged) {
		fmt.Fprintf(out, "%s\n%s\n", escape.Text(err.Error()), hintFor(err))
		return errFsckProblems
	}
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	if repair {
		left, err := v.LeaveOutRefused(ctx)
		if err != nil {
			return err
		}
		for _, r := range left {
			fmt.Fprintf(out, "left out: %s\n", r.String())
		}
	}
	problems, err := v.Fsck(ctx)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(out, escape.Text(p))
	}
	for _, w := range v.PermissionWarnings() {
		fmt.Fprintln(out, "warning: "+escape.Text(w))
	}
	for _, n := range hardeningNotes() {
		fmt.Fprintln(out, "note: "+n)
	}
	if len(problems) > 0 {
		return errFsckProblems
	}
	fmt.Fprintln(out, "ok: history, objects, encryption and identity are sound")
	return nil
}
