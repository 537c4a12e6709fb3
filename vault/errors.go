package vault

import (
	"errors"
	"io/fs"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// The errors callers branch on, with errors.Is, in one place; each
// operation's doc comment says which of them its error may wrap. Paths have been
// validated before any of the first group can occur.
var (
	// Of reads and of Tx mutations.

	// ErrNotExist: nothing at the path.
	ErrNotExist = fs.ErrNotExist
	// ErrExist: something is already at the path.
	ErrExist = fs.ErrExist
	// ErrIsDir: a file operation on a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir: an ancestor of the path is a file.
	ErrNotDir = errors.New("not a directory")
	// ErrTooLarge: content over the vault's file-size limit.
	ErrTooLarge = errors.New("over the file size limit")
	// ErrTooManyFiles: a change would take the vault over its file count limit.
	ErrTooManyFiles = errors.New("over the vault's file count limit")
	// ErrVaultFull: a change would take the vault over its total size limit.
	ErrVaultFull = errors.New("over the vault's size limit")
	// ErrNoIdentity is keys.ErrNoIdentity.
	ErrNoIdentity = keys.ErrNoIdentity
	// ErrDecrypt: no identity given can decrypt a memory file.
	ErrDecrypt = errors.New("cannot decrypt")
	// ErrWatchUnsupported: the system cannot watch the vault for changes (Watch).
	ErrWatchUnsupported = gitlog.ErrWatchUnsupported
	// ErrReadOnly: the vault's files cannot be written (a read-only mount, a
	// backup, another user's vault); it can still be read.
	ErrReadOnly = gitlog.ErrReadOnly
	// ErrNewerFormat: a file of the vault was written by a newer memvault, in
	// a format this one does not know; it is left as it is, and not written.
	ErrNewerFormat = gitlog.ErrNewerFormat
	// ErrBadEntry: an entry of the vault's tree is not a memory file memvault
	// reads: a symbolic link, a submodule, an executable, a name no memory path
	// has, a blob that is not an age file or is larger than the vault's limit. The
	// identity is not at fault; memvault fsck lists every such entry.
	ErrBadEntry = errors.New("not a memory file memvault reads")
	// ErrBusy: another process or goroutine is re-encrypting the vault.
	ErrBusy = errors.New("busy")
	// ErrSealed: the vault is in the sealed format already (Seal).
	ErrSealed = errors.New("the vault is sealed already")
	// ErrUnknownRevision: a revision names no commit of the vault.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrRoot: the operation cannot apply to /memories itself.
	ErrRoot = errors.New("the /memories directory itself")
	// ErrInvalid: a rename into the directory's own subtree.
	ErrInvalid = errors.New("invalid operation")
	// ErrConflict: a revert's change and a later one touch the same lines.
	ErrConflict = errors.New("conflicts with later changes")

	// Of opening a vault, and of its keys and identities.

	// ErrNotRecipient: the identity is not among the vault's recipients, so it could
	// not read the vault's memories.
	ErrNotRecipient = errors.New("the identity is not one of the vault's recipients")
	// ErrPassphrase is keys.ErrPassphrase.
	ErrPassphrase = keys.ErrPassphrase
	// ErrRecipients is keys.ErrRecipients.
	ErrRecipients = keys.ErrRecipients
	// ErrMixedRecipients is keys.ErrMixedRecipients.
	ErrMixedRecipients = keys.ErrMixedRecipients
	// ErrOthersCanWrite is keys.ErrOthersCanWrite: the vault's folder, or a
	// key file, that other users can change.
	ErrOthersCanWrite = keys.ErrOthersCanWrite
	// ErrNotVault: the directory holds no memvault vault.
	ErrNotVault = errors.New("not a memvault vault")
	// ErrDamaged: the vault's branch is unreadable or names a missing commit;
	// RepairAt mends that.
	ErrDamaged = errors.New("the vault's main branch is damaged")
	// ErrHoldsObjects: Init found a git repository that holds objects but no
	// vault on its main branch, such as a vault whose branch was lost, and left it
	// as it is rather than hide its history behind a new first commit.
	ErrHoldsObjects = errors.New("the repository holds objects but no vault on its main branch (a vault whose branch was lost, or another repository); left as it is")

	// Of remotes and transfers (Sync, Clone, AddRemote, RemoveRemote).

	// ErrNoRemote: no remote of that name is configured.
	ErrNoRemote = gitlog.ErrNoRemote
	// ErrRemoteExists: a remote of that name is already configured.
	ErrRemoteExists = gitlog.ErrRemoteExists
	// ErrBadRemoteName: the name cannot name a remote (it could not be part of a ref).
	ErrBadRemoteName = gitlog.ErrBadRefName
	// ErrUnreachable: the remote's host or repository could not be reached.
	ErrUnreachable = gitlog.ErrUnreachable
	// ErrAuth: the remote refused the credentials, or asked for some (over
	// ssh: refused every key offered, or there was none to offer).
	ErrAuth = gitlog.ErrAuth
	// ErrUnknownHost: the ssh host is in no known_hosts file; nothing was sent.
	ErrUnknownHost = gitlog.ErrUnknownHost
	// ErrHostKeyChanged: the ssh host answered with another key than
	// known_hosts records for it (a possible man in the middle); nothing was
	// sent.
	ErrHostKeyChanged = gitlog.ErrHostKeyChanged
	// ErrTimeout: a transfer, or the sync or clone around it, ran out of time.
	ErrTimeout = gitlog.ErrTimeout
	// ErrRejected: the remote refused a push, its branch having moved meanwhile.
	ErrRejected = gitlog.ErrRejected
	// ErrRefused: commits that arrived from a remote hold entries this vault does
	// not admit (see admit); nothing moved.
	ErrRefused = errors.New("the remote's history holds entries memvault does not admit")
	// ErrBadRemoteURL reports a remote URL memvault cannot sync with: an unknown
	// scheme, no host, or what looks like a URL with a mistyped scheme.
	ErrBadRemoteURL = errors.New("not a remote URL memvault can sync with")
	// ErrRecipientsChanged: the remote changed the vault's recipients; Sync moved
	// nothing and says what the remote's recipients are. Sync again with
	// SyncOptions.AcceptRecipients to take them.
	ErrRecipientsChanged = errors.New("the remote changed the vault's recipients")
	// ErrNotWriter: the vault takes only commits its writers signed, and this
	// identity's signing key is not one of them.
	ErrNotWriter = errors.New("not a writer of the vault")
	// ErrUnsigned: a commit that arrived is not signed by a writer of the vault
	// (unsigned, badly signed, or signed by a key that is not a writer in its
	// parents). Nothing moved; no flag takes such a commit.
	ErrUnsigned = errors.New("a commit that no writer of the vault signed")
	// ErrRemovedWriter: commits that arrived were signed by a writer the
	// vault removed, and no current writer vouched for them (signed a commit
	// above them). Nothing moved; SyncOptions.AcceptRemoved takes
	// them once a person has looked.
	ErrRemovedWriter = errors.New("commits signed by a writer who was removed")
	// ErrNotVouched: no writer this clone trusts (the writers named with
	// --expect-writer) signed the history or anything above it: it may be
	// one the host made up. Nothing was cloned.
	ErrNotVouched = errors.New("a history that none of the writers you named signed")
	// ErrFork: the remote went back to an older point of the history and grew
	// commits there that this clone never held. Nothing moved;
	// SyncOptions.AcceptFork merges them once a person has looked.
	ErrFork = errors.New("the remote went back and grew other commits")
	// ErrWritersChanged: the remote changed who may write the vault; Sync moved
	// nothing and says which keys the change adds and removes. Sync again with
	// SyncOptions.AcceptWriters to take it.
	ErrWritersChanged = errors.New("the remote changed the vault's writers")
	// ErrBehind: a push found commits on the remote that the vault lacks; pull or
	// sync first.
	ErrBehind = errors.New("the remote has commits this vault lacks")
)
