package gitlog

import (
	"errors"

	gitobject "github.com/memvault/memvault/gitlog/internal/object"
	"github.com/memvault/memvault/gitlog/internal/record"
	"github.com/memvault/memvault/gitlog/internal/transport"
)

// The errors callers branch on (with errors.Is), in one place. Each operation's
// doc comment says which of them its error may wrap.
var (
	// Of the repository and its refs.

	// ErrNotRepo: the directory holds no git repository.
	ErrNotRepo = errors.New("not a git repository")
	// ErrStale: the branch moved since the parent a commit was built on.
	ErrStale = errors.New("branch moved")
	// ErrNotFound: no entry at a tree path.
	ErrNotFound = errors.New("no such entry")
	// ErrNotDir: a path descends through a file.
	ErrNotDir = errors.New("not a directory")
	// ErrReadOnly: the repository is on a read-only file system or not ours to
	// write; it can be read, not changed.
	ErrReadOnly = errors.New("the repository is read-only")
	// ErrBadRefName: a name git would refuse for a ref.
	ErrBadRefName = errors.New("not a valid ref name")
	// ErrNewerFormat: a file of the repository is in a format this build does not
	// know, written by a newer memvault. It is read as far as it can be, and never
	// written, truncated or started over.
	ErrNewerFormat = record.ErrNewerFormat
	// ErrStop ends a Walk early without error.
	ErrStop = errors.New("stop walk")

	// Of bounded reads.

	// ErrTooLarge: an object is larger than the limit of the read; nothing of
	// it was inflated.
	ErrTooLarge = gitobject.ErrTooLarge
	// ErrWrongType: an object is not of the type its tree entry or parent
	// claims (a blob where a tree should be).
	ErrWrongType = errors.New("object of the wrong type")

	// Of remotes and transfers.

	// ErrNoRemote: no remote of that name is configured.
	ErrNoRemote = errors.New("no such remote")
	// ErrRemoteExists: a remote of that name is already configured.
	ErrRemoteExists = errors.New("remote already exists")
	// ErrUnreachable: the remote's host or repository could not be reached.
	ErrUnreachable = transport.ErrUnreachable
	// ErrAuth: the remote refused the credentials, or asked for some (over
	// ssh: refused every key offered, or there was none to offer).
	ErrAuth = transport.ErrAuth
	// ErrUnknownHost: the ssh host is in no known_hosts file, so who answers
	// cannot be told from anyone else; nothing was sent.
	ErrUnknownHost = transport.ErrUnknownHost
	// ErrHostKeyChanged: the ssh host answered with another key than the one
	// known_hosts records for it: someone may be between this machine and
	// the host. Nothing was sent.
	ErrHostKeyChanged = transport.ErrHostKeyChanged
	// ErrTimeout: the transfer ran out of time.
	ErrTimeout = transport.ErrTimeout
	// ErrRejected: the remote refused the push, its branch having moved
	// (non-fast-forward).
	ErrRejected = transport.ErrRejected

	// Of watching.

	// ErrWatchUnsupported: the system gives no way to watch the repository for
	// changes, so a caller must poll.
	ErrWatchUnsupported = errors.New("watching for changes is not supported on this system")
)

// errDamagedFile: a record memvault keeps beside the repository (the reflog)
// does not check; it is reported, never repaired by guessing.
var errDamagedFile = errors.New("a record of the repository is damaged")
