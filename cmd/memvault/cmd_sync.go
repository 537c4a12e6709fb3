package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/autosync"
	"github.com/memvault/memvault/vault/clonetrust"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/memstore"
)

// transferFlags are the credentials and time limit flags of push, pull, sync and
// clone. A password or token is better given through $MEMVAULT_GIT_TOKEN (or
// $MEMVAULT_GIT_PASSWORD, or a git credential helper) than on the command line,
// where other users see it.
type transferFlags struct {
	username   string // https and ssh
	sshKey     string
	knownHosts string
	timeout    time.Duration
}

// credentials are the transfer's credentials: the flags, completed from the
// environment.
func (f *transferFlags) credentials() vault.Credentials {
	return transferCredentials(f.username, f.sshKey, f.knownHosts, os.Getenv)
}

// transferCredentials is the one place memvault reads credentials from the
// environment: $MEMVAULT_GIT_USERNAME when --username is not given, and
// $MEMVAULT_GIT_PASSWORD, else $MEMVAULT_GIT_TOKEN, all for https only. --username
// names the ssh user too; without it ssh takes the URL's user.
func transferCredentials(username, sshKey, knownHosts string, getenv func(string) string) vault.Credentials {
	c := vault.Credentials{Username: username, SSHUser: username, SSHKeyFile: sshKey, KnownHostsFile: knownHosts}
	if c.Username == "" {
		c.Username = getenv("MEMVAULT_GIT_USERNAME")
	}
	if c.Password = getenv("MEMVAULT_GIT_PASSWORD"); c.Password == "" {
		c.Password = getenv("MEMVAULT_GIT_TOKEN")
	}
	return c
}

// defaultTransferTimeout bounds a push, pull, sync or clone without --timeout.
// It is far longer than a vault takes over any working link (two clones 1,000
// commits apart sync in seconds), and short enough that a server that accepts
// the connection and then stalls does not hold an agent's session for good;
// go-git sets no limit of its own.
const defaultTransferTimeout = 10 * time.Minute

func (f *transferFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.username, "username", "", "the `USER` for https basic auth, or the ssh user (default $MEMVAULT_GIT_USERNAME)")
	c.Flags().StringVar(&f.sshKey, "ssh-key", "", "an ssh private key `FILE` instead of the ssh agent and ~/.ssh/id_*")
	c.Flags().StringVar(&f.knownHosts, "known-hosts", "", "a known_hosts `FILE` to check the ssh host against (default ~/.ssh/known_hosts)")
	c.Flags().DurationVar(&f.timeout, "timeout", defaultTransferTimeout, "give up when the whole transfer takes longer than `DURATION` (0: no limit)")
}

// transferHelp ends the help of push, pull, sync and clone.
const transferHelp = `Credentials: https takes --username and $MEMVAULT_GIT_TOKEN or
$MEMVAULT_GIT_PASSWORD, else a user and password in the URL, else what git's
credential helpers hold (credential.helper in git's global config or the
vault's): they are asked only when the server wants credentials, git may not
prompt, and they are told to forget a password the server refuses. ssh offers
what git does: the ssh agent's keys, then ~/.ssh/id_rsa, id_ecdsa and
id_ed25519 when they need no passphrase; --ssh-key FILE offers that key alone.
The host is checked in ~/.ssh/known_hosts (or --known-hosts FILE): a host not
there, or one whose key changed, is refused before anything is sent.

A transfer that takes longer than --timeout (default 10m; 0 for no limit) gives
up; nothing is left half done.`

// withTimeout bounds ctx by d; 0 leaves it unbounded.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// gaveUpAfter names the --timeout d in the error of a transfer that ran out of
// it (ctx is the one d bounded); vault's error already says it timed out.
func gaveUpAfter(ctx context.Context, d time.Duration, err error) error {
	if !errors.Is(err, vault.ErrTimeout) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("gave up after --timeout %s: %w", d, err)
}

// progressTo is where the server's progress goes: stderr when it is a terminal,
// nowhere when piped.
func progressTo(w io.Writer) io.Writer {
	if isTerminal(w) {
		return progressWriter{w}
	}
	return nil
}

// progressWriter passes progress to a terminal with everything escaped but the
// carriage returns and newlines progress lines are made of: a git server's
// own messages (sideband) come from the remote, and could hold escape
// sequences as much as a name could.
type progressWriter struct{ w io.Writer }

func (p progressWriter) Write(b []byte) (int, error) {
	n := len(b)
	var out strings.Builder
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			i = len(b)
		}
		out.WriteString(escape.Line(string(b[:i])))
		if i < len(b) {
			out.WriteByte(b[i])
			i++
		}
		b = b[i:]
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return n, nil
}

func newSyncCommands(g *globalOptions) []*cobra.Command {
	mk := func(use string, mode vault.SyncMode, short, long string) *cobra.Command {
		var tf transferFlags
		var accept, acceptWriters, acceptFork, acceptRemoved, watch, skip bool
		var every time.Duration
		c := &cobra.Command{
			Use:   use + " [REMOTE]",
			Short: short,
			Long:  long,
			Args:  usageArgs(cobra.MaximumNArgs(1)),
			RunE: func(c *cobra.Command, args []string) error {
				opts := vault.SyncOptions{Mode: mode, Auth: tf.credentials(), AcceptRecipients: accept, AcceptWriters: acceptWriters,
					AcceptFork: acceptFork, AcceptRemoved: acceptRemoved, SkipRefused: skip, Progress: progressTo(c.ErrOrStderr())}
				if len(args) == 1 {
					opts.Remote = args[0]
				}
				if watch {
					if accept || acceptWriters || acceptFork || acceptRemoved {
						return &usageError{cmd: c.CommandPath(), err: errors.New("--watch never takes a change of recipients or writers, a fork or a removed writer's commits on its own: run sync once with the accept flag it needs (--accept-recipients, --accept-writers, --accept-fork or --accept-removed), after checking")}
					}
					return runSyncWatch(c.Context(), g, opts, every, tf.timeout, c.ErrOrStderr())
				}
				return runSync(c.Context(), g, opts, tf.timeout, c.OutOrStdout())
			},
		}
		tf.register(c)
		if mode != vault.SyncPush {
			c.Flags().BoolVar(&accept, "accept-recipients", false, "take a change of the vault's recipients made on the remote")
			c.Flags().BoolVar(&acceptWriters, "accept-writers", false, "take a change of who may write the vault made on the remote")
			c.Flags().BoolVar(&skip, "skip-refused", false, "merge a remote whose history holds refused entries, leaving them out")
			c.Flags().BoolVar(&acceptFork, "accept-fork", false, "merge a remote that went back and grew other commits, after looking at them")
			c.Flags().BoolVar(&acceptRemoved, "accept-removed", false, "take commits of a writer this vault removed that no current writer vouched for, after looking at them")
		}
		if mode == vault.SyncBoth {
			c.Flags().BoolVar(&watch, "watch", false, "keep syncing until interrupted: soon after each write, and every --every")
			c.Flags().DurationVar(&every, "every", autosync.DefaultEvery, "with --watch, sync this often to bring in others' changes")
		}
		return c
	}
	const merge = `When both sides changed the vault, the histories are merged on plaintext: a file
changed on one side takes that side; a file changed on both is decrypted, merged by
lines and encrypted again. Overlapping edits stay in the file between conflict
markers (<<<<<<< ours (host, time) / ======= / >>>>>>> theirs (remote, time)), so no
memory is lost; the merge commit names each such file, the command lists them and
exits with status 1 (as git merge does; the merge is made, and sync pushed it).
Settle each with 'memvault edit PATH', or 'C' in 'memvault ui'. A change of the
recipients made on the remote is shown and taken only with --accept-recipients.

Every commit the remote brings is checked first; when one holds what memvault does
not admit (a plaintext file, a symbolic link, a crafted name, a blob over the size
limit...), nothing moves and each is named. --skip-refused then merges everything
else and leaves those entries out, naming each in the merge commit.`
	const watchHelp = `With --watch, sync keeps running until interrupted (Ctrl-C, SIGTERM): it syncs at
once, about a second after any write to the vault (by any process), and every
--every (default 30s) to bring in what others pushed, each sync bounded by
--timeout, and logs one line per sync on stderr. When a sync fails (the remote
is down) it tries again after a random wait that doubles up to 5 minutes. A
change of recipients made on the remote is never taken: the loop says so and
waits for a person to run sync --accept-recipients.`
	return []*cobra.Command{
		mk("sync", vault.SyncBoth, "Fetch, merge and push: bring the vault and a remote together",
			"Sync fetches the remote's main branch (REMOTE, default origin), fast-forwards or\nmerges it, and pushes the result.\n\n"+merge+"\n\n"+watchHelp+"\n\n"+transferHelp+"\n\n"+storeHelp),
		mk("pull", vault.SyncPull, "Fetch and merge a remote's changes, without pushing",
			"Pull fetches the remote's main branch and fast-forwards or merges it.\n\n"+merge+"\n\n"+transferHelp),
		mk("push", vault.SyncPush, "Push the vault to a remote that is behind",
			"Push sends the vault's main branch to the remote. It refuses when the remote has\ncommits the vault lacks: run sync then.\n\n"+transferHelp),
		newCloneCommand(g),
	}
}

// runSync syncs the vault with a remote. timeout bounds the sync itself, not the
// opening of the vault, which may wait for a person to type a passphrase.
func runSync(ctx context.Context, g *globalOptions, opts vault.SyncOptions, timeout time.Duration, out io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	if store, ok, err := storeRemote(v, opts.Remote); err != nil {
		return err
	} else if ok {
		if opts.Mode == vault.SyncPush {
			return fmt.Errorf("push: %s is a memory store, which sync pulls from before it pushes: run memvault sync %[1]s", remoteName(opts.Remote))
		}
		return runStoreSync(ctx, v, store, opts.Mode == vault.SyncPull, timeout, opts.Progress, out)
	}
	tctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	res, err := v.Sync(tctx, opts)
	err = gaveUpAfter(tctx, timeout, err)
	if res.RecipientsChanged {
		writeRecipientsNotice(out, res, !errors.Is(err, vault.ErrRecipientsChanged))
	}
	if len(res.WritersAdded)+len(res.WritersRemoved) > 0 {
		writeWritersNotice(out, res, !errors.Is(err, vault.ErrWritersChanged))
	}
	if res.WentBack {
		writeWentBack(out, res, err == nil)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s; head %.12s", res.Action, res.Head)
	if res.Pushed {
		fmt.Fprint(out, "; remote up to date")
	}
	fmt.Fprintln(out)
	for _, r := range res.LeftOut {
		fmt.Fprintf(out, "left out: %s\n", r.String())
	}
	for _, p := range res.Conflicts {
		if slices.Contains(res.MovedAside, p) {
			fmt.Fprintf(out, "conflict: %s (a file moved aside: the other side made its name a directory; rename it to settle it)\n", escape.Name(p))
			continue
		}
		fmt.Fprintf(out, "conflict: %s (both versions kept between markers; edit the file to settle it)\n", escape.Name(p))
	}
	return conflictsLeft(len(res.Conflicts))
}

// errConflictsLeft reports that a sync or pull did its work and left files in
// conflict, listed on stdout: it exits with status 1, as git merge does, so
// a script or an agent's loop does not take the vault for settled.
var errConflictsLeft = errors.New("files left in conflict")

// conflictsLeft is the error of a sync that left n files in conflict, nil
// for none.
func conflictsLeft(n int) error {
	if n == 0 {
		return nil
	}
	return conflictsLeftError(n)
}

// conflictsLeftError is how many files a sync left in conflict; it is
// errConflictsLeft.
type conflictsLeftError int

func (n conflictsLeftError) Error() string {
	if n == 1 {
		return "sync: 1 file holds both sides of a conflict (listed above)"
	}
	return fmt.Sprintf("sync: %d files hold both sides of a conflict (listed above)", int(n))
}

func (conflictsLeftError) Is(target error) bool { return target == errConflictsLeft }

// writeWentBack says that the remote no longer holds what this clone pushed
// to it or fetched from it before, and what the sync did about it. memvault
// never rewrites history, so the host did, or someone with its keys; and a
// clone made from it now would get the older state without a word.
func writeWentBack(out io.Writer, res vault.SyncResult, done bool) {
	now := fmt.Sprintf("it is now at %.12s", res.Found)
	if strings.Trim(res.Found, "0") == "" {
		now = "it holds no main branch now"
	}
	fmt.Fprintf(out, "The remote went backwards: it no longer holds %.12s, which this clone pushed or fetched before; %s.\n", res.Seen, now)
	switch {
	case done && res.Pushed:
		fmt.Fprintln(out, "  This sync pushed main again: the remote holds everything it had lost. Ask who controls it why it went back.")
	case done:
		fmt.Fprintln(out, "  Nothing was pushed: run 'memvault sync' to put back what it lost. Ask who controls it why it went back.")
	default:
		fmt.Fprintln(out, "  Nothing was pushed. Ask who controls it why it went back.")
	}
}

// writeRecipientsNotice lists the keys taking the remote's history would add
// to and remove from this clone's recipients, computed on the resulting set: a comment in the file is the remote's to
// write, so it is shown only escaped, after the key it belongs to.
func writeRecipientsNotice(out io.Writer, res vault.SyncResult, taken bool) {
	if taken {
		fmt.Fprintln(out, "The remote changed the vault's recipients (taken, with --accept-recipients):")
	} else {
		fmt.Fprintln(out, "The remote changed the vault's recipients (not taken):")
	}
	for _, r := range res.RecipientsAdded {
		fmt.Fprintf(out, "  added    %s\n", describeRecipient(r))
	}
	for _, r := range res.RecipientsRemoved {
		fmt.Fprintf(out, "  removed  %s\n", describeRecipient(r))
	}
}

// describeRecipient names a recipient as a person compares it with its
// owner's: an age key whole, an SSH key by its fingerprint (as ssh-keygen -l
// prints it), a post-quantum key by its ends.
func describeRecipient(r keys.Recipient) string {
	s := escape.Name(keys.Abbrev(r.Key)) + "  (" + escape.Name(r.Type) + ")"
	if r.Comment != "" {
		s += "  # " + escape.Name(r.Comment)
	}
	return s
}

// checkClone shows the recipients and writers a new clone is about to trust,
// marked by the policy, and refuses, with what to do, a clone that lets in a
// key the person did not name (see package clonetrust).
func checkClone(out io.Writer, p clonetrust.Policy, f vault.CloneFound) error {
	v := p.Judge(clonetrust.Found(f))
	fmt.Fprintln(out, "recipients (whoever holds one of these keys reads what this clone writes):")
	for i, r := range f.Recipients {
		fmt.Fprintf(out, "  %s  %s\n", describeRecipient(r), v.Recipients[i])
	}
	// A new clone trusts the writers it first sees: say who they are, so the
	// fingerprints can be compared with the collaborators'.
	if f.HasWriters {
		fmt.Fprintln(out, "writers (this clone trusts them from now on; compare the fingerprints with your collaborators'):")
		for i, w := range f.Writers {
			mark := ""
			if m := v.Writers[i]; m != clonetrust.Unmarked {
				mark = "  " + m.String()
			}
			fmt.Fprintf(out, "  %s  %s%s\n", escape.Name(w.Fingerprint), escape.Name(w.Comment), mark)
		}
	} else {
		fmt.Fprintln(out, "this vault has no writers list: it takes any commit that arrives ('memvault writers init' starts one)")
	}
	err := v.Err()
	switch {
	case errors.Is(err, clonetrust.ErrNoWritersList):
		return &hintedError{err: err,
			hint: "Ask a writer of the vault to run 'memvault writers init' and sync, or clone without --expect-writer.",
		}
	case errors.Is(err, clonetrust.ErrUnnamedWriters):
		return &hintedError{err: err,
			hint: "Check each writer marked NOT EXPECTED with its owner: whoever holds it can write this memory. " +
				"Then clone again with --expect-writer FINGERPRINT for each (or use 'memvault join', which trusts the writer who added you).",
		}
	case errors.Is(err, clonetrust.ErrUnexpectedReaders):
		return &hintedError{err: err,
			hint: "Check each key marked NOT EXPECTED with its owner: whoever holds it reads what you write. " +
				"Then clone again with --expect-recipient KEY for each (or --accept-recipients to take them all).",
		}
	}
	return err
}

func newCloneCommand(g *globalOptions) *cobra.Command {
	var tf transferFlags
	var skip bool
	var ct clonetrust.Policy
	c := &cobra.Command{
		Use:   "clone URL [DIR]",
		Short: "Make a local vault from a remote one",
		Long: `Clone copies the vault at URL into DIR (default: --vault, $MEMVAULT_DIR, else the
default vault) and records URL as remote origin. Your identity must be one of the
vault's recipients; if it is not, clone says which recipient to ask someone to add.

A new clone has nothing to compare the vault with, so it shows the recipients
(who reads what you write) and the writers (whose commits it takes) it found.
A recipient that is not your own key must be named with --expect-recipient KEY
(once per key), or all taken with --accept-recipients; otherwise nothing is
cloned: a host that added its own key would read everything written here.
With --expect-writer FINGERPRINT (once per writer, as 'memvault writers' lists
them on a clone you trust), the clone takes a history only when one of the writers
you named signed it (each first commit is below a commit one of them signed), and a
writer the vault lists that you did not name refuses the clone: a host that made up
a history of its own is caught before anything is taken. A clone that fails leaves
nothing behind, and no command makes an empty vault where it was to be.

Every commit is checked as sync checks what arrives; when one holds what memvault
does not admit, the clone is refused and each entry named. --skip-refused clones
anyway, with one more commit that leaves those entries out and names each.

` + transferHelp,
		Example: `  memvault clone git@github.com:me/memory.git
  memvault clone https://git.example.com/me/memory.git ~/memory.git`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 2 {
				dir = args[1]
			}
			for _, k := range ct.Expect {
				if _, err := keys.ParseRecipient(k); err != nil {
					return &usageError{cmd: c.CommandPath(), err: err}
				}
			}
			for _, k := range ct.Writers {
				if err := clonetrust.CheckWriter(k); err != nil {
					return &usageError{cmd: c.CommandPath(), err: fmt.Errorf("--expect-writer %w", err)}
				}
			}
			return runClone(c.Context(), g, args[0], dir, tf, skip, ct, progressTo(c.ErrOrStderr()), c.OutOrStdout())
		},
	}
	tf.register(c)
	c.Flags().BoolVar(&skip, "skip-refused", false, "clone a remote whose history holds refused entries, leaving them out")
	c.Flags().BoolVar(&ct.Accept, "accept-recipients", false, "take every recipient the vault holds, after checking them")
	c.Flags().StringArrayVar(&ct.Expect, "expect-recipient", nil, "a `KEY` besides yours that may read the vault (repeat for each)")
	c.Flags().StringArrayVar(&ct.Writers, "expect-writer", nil, "a writer's `FINGERPRINT` or public key; with any, only the writers named are taken (repeat for each)")
	return c
}

// runClone clones url into dir. --timeout bounds the whole of vault.Clone, so
// the time a person takes to type a protected identity's passphrase, which it
// asks for first, counts against it.
func runClone(ctx context.Context, g *globalOptions, url, dir string, tf transferFlags, skip bool, ct clonetrust.Policy, progress, out io.Writer) error {
	if _, ok := memstore.StoreID(url); ok {
		return fmt.Errorf("clone: %s is a memory store, not a vault: memvault import %[1]s brings its history into a vault", url)
	}
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
	tctx, cancel := withTimeout(ctx, tf.timeout)
	defer cancel()
	opts := g.options(identity)
	v, left, err := vault.Clone(tctx, url, dir, opts, vault.CloneOptions{
		Auth: tf.credentials(), Progress: progress, SkipRefused: skip, ExpectWriters: clonetrust.Pins(ct.Writers),
		Trust: func(f vault.CloneFound) error { return checkClone(out, ct, f) },
	})
	if err != nil {
		markCloneFailed(dir, url, err)
		return gaveUpAfter(tctx, tf.timeout, err)
	}
	defer v.Close()
	clearCloneFailed(dir)
	shown := "the remote" // the URL as the vault keeps it: any password in it redacted
	if rs, err := v.Remotes(); err == nil {
		for _, r := range rs {
			if r.Name == vault.DefaultRemote {
				shown = r.URL
			}
		}
	}
	fmt.Fprintf(out, "cloned %s into %s\n", shown, dir)
	for _, r := range left {
		fmt.Fprintf(out, "left out: %s\n", r.String())
	}
	return nil
}
