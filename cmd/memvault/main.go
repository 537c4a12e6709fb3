// Command memvault is the command-line face of memvault: it creates vaults, answers
// Claude's memory tool (memory_20250818) one call at a time or as a JSON-lines server,
// and shows what a vault holds and how it got there.
//
// The commands are thin: each opens a vault and hands it to package vault or agent.
// Every error a command returns reaches exitCode, which alone decides the exit status.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// Exit statuses. They are part of the interface of `memvault tool`.
const (
	exitOK        = 0
	exitAnswer    = 1 // the memory tool answered with an error, or cat found nothing
	exitSetup     = 2 // usage or setup error: bad flags, no vault, no identity, I/O
	exitInterrupt = 130
)

// errErrorAnswer reports that the tool's answer, already on stdout, has is_error set.
var errErrorAnswer = errors.New("the memory tool answered with an error")

// errLeftOut reports that a command did its work on everything but the entries
// that are no memory file memvault can read, which it named on stderr already
// (writeBadEntries). It exits with status 1, so a script does not take the
// partial result for a whole one.
var errLeftOut = errors.New("entries left out as no memory file memvault can read")

// Errors for a memory path that names no file to show. Like an error answer, they
// exit with status 1.
var (
	errNoMemory  = errors.New("no such memory file")
	errMemoryDir = errors.New("a directory, not a memory file")
)

// usageError is a mistake on the command line.
type usageError struct {
	cmd string // the command's full name, for the help hint
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func main() {
	harden() // before anything is decrypted: no plaintext in core dumps, nor in swap when allowed
	limitMemory()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one memvault command line and returns its exit status.
// Tests call it in process with their own streams.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	debug, _ := root.PersistentFlags().GetBool("debug")
	return exitCode(err, stderr, debug)
}

// exitCode maps the error a command returned to the process's exit status, printing
// the message and, where one helps, what to do next (hintFor). This is the only
// place that does. The message is shown without the package names its layers
// put before it (userMessage), unless debug (--debug) asks for all of it.
func exitCode(err error, stderr io.Writer, debug bool) int {
	safeError := userMessage
	if debug {
		safeError = func(err error) string { return escape.Text(err.Error()) }
	}
	var usage *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errErrorAnswer):
		// The answer itself is on stdout; stderr stays quiet, as the tool contract wants.
		return exitAnswer
	case errors.Is(err, errLeftOut):
		return exitAnswer // stderr named what was left out already
	case errors.Is(err, errReported):
		return exitSetup // said on stderr, and to the clients, already
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "memvault: interrupted")
		return exitInterrupt
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "memvault: %s\nRun '%s --help' for usage.\n", safeError(err), usage.cmd)
		return exitSetup
	}
	fmt.Fprintf(stderr, "memvault: %s\n", safeError(err))
	if hint := hintFor(err); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	switch {
	case errors.Is(err, vault.ErrConflict), errors.Is(err, errNoMemory), errors.Is(err, errMemoryDir),
		errors.Is(err, errFsckProblems), errors.Is(err, errConflictsLeft):
		return exitAnswer
	}
	return exitSetup
}

// setupHint returns what to do next after a setup error ("" when there is no
// advice) and what to show of the error, from the one table of hints: for the
// clients of a server that could not start, who cannot see stderr.
func setupHint(err error) (hint string, shown error) {
	var usage *usageError
	var hinted *hintedError
	switch {
	case errors.As(err, &usage):
		return "Run '" + usage.cmd + " --help' for usage.", err
	case errors.As(err, &hinted):
		return hinted.hint, hinted.err
	}
	return hintFor(err), err
}

// hints says, for what went wrong, what a person at the command line can do
// next. Library errors say only what happened; the advice is here, in one
// table. hintFor takes the first entry err wraps, so the more telling comes
// first (a sync that ran out of time because the remote kept moving is about
// the remote moving).
var hints = []struct {
	err  error
	hint string
}{
	{vault.ErrNotVault, hintInit},
	{vault.ErrNoIdentity, hintIdentity},
	{vault.ErrDecrypt, hintDecrypt},
	{vault.ErrPassphrase, hintPassphrase},
	{vault.ErrUnknownRevision, hintRevision},
	{vault.ErrDamaged, hintDamaged},
	{vault.ErrHoldsObjects, hintHoldsObjects},
	{vault.ErrMixedRecipients, hintMixedRecipients},
	{vault.ErrRejected, hintRejected},
	{vault.ErrTimeout, hintTimeout},
	{vault.ErrHostKeyChanged, hintHostKeyChanged},
	{vault.ErrUnknownHost, hintUnknownHost},
	{vault.ErrAuth, hintAuth},
	{vault.ErrNoRemote, hintNoRemote},
	{vault.ErrBadRemoteURL, hintRemoteURL},
	{vault.ErrUnreachable, hintUnreachable},
	{vault.ErrBehind, hintBehind},
	{vault.ErrRecipientsChanged, hintRecipientsChanged},
	{vault.ErrWritersChanged, hintWritersChanged},
	{vault.ErrUnsigned, hintUnsigned},
	{vault.ErrRemovedWriter, hintRemovedWriter},
	{vault.ErrFork, hintFork},
	{vault.ErrNotVouched, hintNotVouched},
	{vault.ErrNotWriter, hintNotWriter},
	{vault.ErrNotRecipient, hintNotRecipient},
	{vault.ErrReadOnly, hintReadOnly},
	{vault.ErrNewerFormat, hintNewerFormat},
	{vault.ErrRefused, hintRefused},
	{vault.ErrConflict, hintConflict},
	{errConflictsLeft, hintConflictsLeft},
}

// hintFor is what to do next about err: a command's own hint (hintedError),
// else the first of hints that err wraps, else "".
func hintFor(err error) string {
	var hinted *hintedError
	if errors.As(err, &hinted) {
		return hinted.hint
	}
	for _, h := range hints {
		if errors.Is(err, h.err) {
			return h.hint
		}
	}
	return ""
}

// safeError is err's message with what a terminal would obey escaped: an
// error may name a path, a remote or a revision that came from the repository.
func safeError(err error) string { return escape.Text(err.Error()) }

// packageNames are the names of memvault's packages. Their errors begin with
// them ("vault: open DIR: ..."), which says where an error came from in a log
// or under --debug, and nothing to a person at the command line.
var packageNames = map[string]bool{
	"vault": true, "gitlog": true, "agent": true, "mcpserver": true, "claude": true,
	"tui": true, "escape": true, "textdiff": true, "keyhook": true, "mount": true,
	"keys": true, "memstore": true, "contract": true, "jsonl": true, "autosync": true,
	"seal": true, "memstoreapi": true, "plainexport": true, "clonetrust": true,
	"disk": true, "record": true, "object": true, "durable": true, "pack": true, "journal": true,
	"source": true, "transport": true,
}

// userMessage is err's message as a person reads it: escaped as safeError
// does, without the package names its layers put before their parts.
func userMessage(err error) string {
	parts := strings.Split(err.Error(), ": ")
	kept := parts[:0]
	for _, p := range parts {
		if !packageNames[p] {
			kept = append(kept, p)
		}
	}
	return escape.Text(strings.Join(kept, ": "))
}

// hintedError is a setup error with what to do next, for an error only one
// command meets.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() }
func (e *hintedError) Unwrap() error { return e.err }

// Hints printed under a setup error: each says what to do next.
const (
	hintReadOnly = "The vault can be read (view, cat, log, fsck) but not changed here: " +
		"write to a copy or clone of it, or remount it read-write."
	hintNewerFormat = "A newer memvault wrote to this vault: install that version (or newer) to change it; " +
		"this one leaves those files as they are."
	hintNoRemote  = "'memvault remote list' lists the remotes; 'memvault remote add origin URL' adds one."
	hintRemoteURL = "A remote is https://host/owner/repo.git, ssh://git@host/owner/repo.git or " +
		"git@host:owner/repo.git, git://host/repo.git, file:///path/to/repo.git or a plain path."
	hintRevision = "'memvault log' lists the commits and 'memvault checkpoints' the checkpoints."
	hintInit     = "Point --vault (or MEMVAULT_DIR) at an existing vault, or run 'memvault init' " +
		"to create one there."
	hintDamaged = "Run 'memvault fsck' on the vault (with the same --vault) to see what is damaged; " +
		"'memvault fsck --repair' points its branch back at the last sound commit and deletes nothing."
	hintHoldsObjects = "Nothing was changed. 'git --git-dir=VAULT fsck --lost-found' lists the commits no " +
		"branch names, and 'git --git-dir=VAULT update-ref refs/heads/main COMMIT' brings one back; " +
		"to start a new vault, move the folder away or point --vault elsewhere."
	// hintIdentity never offers a new key as the way on: a key made now is not
	// one the vault's files are encrypted to, so it reads none of them.
	hintIdentity = "Point --identity (or MEMVAULT_IDENTITY) at the identity file the vault " +
		"was made with (restore it from a backup if it was lost). A new key cannot read what is " +
		"already there: 'memvault identity new' makes one, and someone who can read the vault " +
		"adds its public key with 'memvault recipients add' to let it in."
	hintDecrypt = "The identity in use is not one the vault's files are encrypted to: " +
		"pass the right one with --identity (or MEMVAULT_IDENTITY), or ask someone who can read " +
		"the vault to run 'memvault recipients add' with your public key ('memvault identity show' " +
		"prints it). Keys a rekey retired (IDENTITY.old, IDENTITY.old.N beside the identity) are " +
		"tried by themselves; a key kept elsewhere is read with by giving --identity once more."
	hintPassphrase = "The identity is protected by a passphrase: type it on the terminal, or " +
		"name a file holding it with --passphrase-file (or MEMVAULT_PASSPHRASE_FILE)."
	hintTimeout = "The remote did not answer in time, and nothing was left half done. Check the " +
		"network and the remote, then run the command again, or allow more time with --timeout " +
		"(0: no limit)."
	hintAuth = "The remote wants credentials, or refused them. For https set $MEMVAULT_GIT_TOKEN " +
		"(with --username if the host wants a user), or keep them in a git credential helper. For " +
		"ssh, memvault offers what git does: the ssh agent's keys, then ~/.ssh/id_rsa, id_ecdsa and " +
		"id_ed25519 when they need no passphrase (load one that does with ssh-add), or the key " +
		"--ssh-key names; the host must hold its public key ('ssh -T git@HOST' checks)."
	hintUnknownHost = "Check the host's key fingerprint with its owner (GitHub, GitLab and others publish " +
		"theirs), then add the host: 'ssh-keyscan HOST >> ~/.ssh/known_hosts', or connect once with " +
		"'ssh git@HOST' and answer yes. --known-hosts FILE checks against another file."
	hintHostKeyChanged = "Do not sync with this host until you know why its key changed. If its owner " +
		"confirms a new key, remove the old one with 'ssh-keygen -R HOST' and add the new one; if not, " +
		"someone may be between you and the host."
	hintUnreachable = "Check the remote's URL ('memvault remote list'), the network, and that the " +
		"repository exists on the host."
	hintRejected = "Another clone kept pushing first, so each merge was out of date before it " +
		"could be pushed; nothing was left half done. Run 'memvault sync' again, or allow more " +
		"time with --timeout."
	hintBehind = "Run 'memvault sync' (or 'memvault pull') to merge the remote's commits first; " +
		"push then has nothing to refuse."
	hintRecipientsChanged = "Nothing was changed. If you trust the new recipients listed above, " +
		"sync again with --accept-recipients to take them."
	hintWritersChanged = "Nothing was changed. If you trust the change of writers listed above (check each " +
		"fingerprint with its owner), sync again with --accept-writers to take it."
	hintUnsigned = "Nothing was changed, and no flag takes such a commit: whoever controls the remote, or a key " +
		"that is no longer a writer, may have made it. A writer can put the remote's main branch back to the last " +
		"good commit ('memvault sync' then works again); 'memvault writers' lists who may write."
	hintRemovedWriter = "Nothing was changed. A writer this vault removed signed those commits after or without your vault " +
		"knowing; no current writer vouched for them. Look at them ('memvault log REMOTE/main' after a fetch, or ask who " +
		"made them); to take that work anyway, sync again with --accept-removed."
	hintFork = "Nothing was changed. The remote's host, or a writer who was removed, may have put it back and added other " +
		"commits. Ask who controls the remote; once you trust those commits, sync again with --accept-fork to merge them."
	hintNotVouched = "Nothing was cloned. The history was not signed by the writer you named: compare the fingerprint with " +
		"its owner, and ask them whether the remote holds their vault."
	hintNotWriter = "Give the key above to a writer of the vault; once they run 'memvault writers add' with it " +
		"and sync, sync here and write again. 'memvault writers' lists the writers."
	hintNotRecipient = "Ask someone who can read the vault to run 'memvault recipients add' with " +
		"the recipient named above and push, then clone again."
	hintMixedRecipients = "'memvault identity new --pq' makes a post-quantum key; add such keys " +
		"and remove the classical ones, or use no post-quantum key at all."
	hintConflictsLeft = "Settle each with 'memvault edit PATH' (or 'C' in 'memvault ui'); 'memvault status' lists " +
		"what is left. The merge is made and kept; sync again once they are settled."
	// hintConflict is printed under a revert that does not apply.
	hintConflict = "Nothing was changed. Edit the files yourself, or take one back whole with " +
		"'memvault restore PATH --at REV~1'."
	hintRefused = "Run sync (or pull) again with --skip-refused to take everything else and leave " +
		"these entries out (the merge commit names each; push then puts a clean head on the remote), " +
		"or clone with --skip-refused. A revert on the remote does not help, since the commits stay in " +
		"its history; whoever controls the remote can instead put its main branch back to the last " +
		"good commit (git push --force)."
)
