package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/mount"
)

func newMountCommand(g *globalOptions) *cobra.Command {
	var unmount bool
	var agentName string
	var face faceFlags
	c := &cobra.Command{
		Use:   "mount DIR | mount -u DIR",
		Short: "Show the vault as a folder (FUSE), every closed write a commit",
		Long: `Mount shows the vault's /memories as the folder DIR, through FUSE, until Ctrl-C,
SIGTERM or 'memvault mount -u DIR'. Programs that keep memory in files (Claude
Code's auto memory, the SDKs' local-filesystem memory tools, editors, scripts) then
keep it in the vault:

  - every file closed after a write, every rename and every delete is one commit,
    authored by the program that made it (its name as the kernel knows it);
  - editors' scratch files (vim's .swp, emacs's #NAME# and .#NAME, NAME~ backups,
    NAME.tmp files that atomic writers rename over their target) live in memory and
    are never committed: a temporary file renamed over a memory file is one commit
    of that file;
  - names go through the memory tool's path rules; a directory made with mkdir lives
    in memory until a file is written in it (the vault keeps no empty directory);
  - what sync, the UI and other processes commit shows in the folder at once;
  - plaintext lives only in this process and the kernel: files are opened with
    direct I/O, so the kernel keeps no page cache of them, and nothing decrypted is
    written to a disk. Only you can enter the folder.

With --read-only the folder is mounted read-only: every write fails with EROFS. With
--review (or the vault's memvault.review) the folder shows the agent's view and each
write waits on the review line for a person ('memvault review'). A delete that takes
what was deleted past the vault's limits (more than 5 files, or a quarter of them) fails
with EACCES, waits for a person the same way, and the log says how to approve it.

Mount runs in the foreground. Linux only: /dev/fuse, and as root nothing else; as
another user the fusermount3 helper (package fuse3).`,
		Example: `  memvault mount ~/memory &
  memvault mount ~/.claude/projects/-home-me-app/memory
  memvault mount -u ~/memory`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if unmount {
				return mount.Unmount(args[0])
			}
			return runMount(c.Context(), g, args[0], agentName, face, c.ErrOrStderr())
		},
	}
	c.Flags().BoolVarP(&unmount, "unmount", "u", false, "unmount the vault mounted on DIR")
	c.Flags().StringVar(&agentName, "agent", "", "`NAME` of the author of commits whose program is unknown (default mount)")
	face.add(c)
	return c
}

func runMount(ctx context.Context, g *globalOptions, dir, agentName string, face faceFlags, errOut io.Writer) (err error) {
	v, err := g.openFace(ctx, errOut, g.passphrase)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	// The identity is read now, not at the first read through the folder, where
	// a passphrase prompt could not be answered.
	if err := v.Unlock(); err != nil {
		return err
	}
	store := face.store(v)
	face.say(store, errOut)
	m, err := mount.Start(ctx, store, dir, mount.Options{
		Agent:    agentName,
		Screen:   agent.ImportScreen(v.Limits()),
		Log:      errOut,
		ReadOnly: face.readOnly,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "memvault: mounted %s on %s; Ctrl-C or 'memvault mount -u %s' unmounts it\n", v.Dir(), dir, dir)
	err = m.Wait()
	fmt.Fprintf(errOut, "memvault: unmounted %s\n", dir)
	return err
}
