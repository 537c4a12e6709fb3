// Package storehook lends package vault/exchange (sync, merge, clone) the
// internals of package vault it works on, without widening vault's exported
// surface: the repository under a vault, its commit message format, its
// encryption and signing, and the admission rules vault's own fsck shares with
// sync. Package vault fills Lent in its init; exchange takes it as it is
// initialized (after vault, which it imports). Nothing else imports
// this package.
package storehook

import (
	"context"
	"time"

	"filippo.io/age"
	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/seal"
)

// Store is what vault lends, generic in vault's own types so that this
// package, which vault imports, need not name them: V is vault.Vault, O
// vault.Options, R vault.Refusal.
type Store[V, O, R any] struct {
	// The layout of a vault's tree and the bounds of a memory path.
	MemDir, RecipientsPath    string
	MaxPathLen, MaxSegmentLen int

	// The trailer keys of a commit message, and its format: FormatMessage
	// writes a subject and trailers, TrailerValues reads back the value of
	// the last trailer named each key ("" for none), TreePath maps a memory
	// path to its tree path ("/memories/a.md" -> "memories/a.md"), OneLine
	// keeps a value on one line.
	TrCommand, TrPath, TrNewPath, TrConflict, TrSquashed string

	FormatMessage func(subject string, trailers [][2]string) string
	TrailerValues func(msg string, keys ...string) []string
	TreePath      func(p string) (string, error)
	OneLine       func(s string) string

	// Fill gives opts the defaults Open gives them.
	Fill func(opts *O) error

	// The internals of an open vault.
	Repo       func(v *V) *gitlog.Repo
	Now        func(v *V) time.Time
	Signer     func(v *V, parents ...gitlog.Hash) (gitlog.Signer, error)
	ReadBlob   func(v *V, p string, h gitlog.Hash) ([]byte, error) // a memory file's plaintext
	Recipients func(v *V, c gitlog.Hash) ([]byte, error)           // commit c's recipients file
	// ParseRecipients parses a recipients file for Encrypt; the error wraps
	// vault.ErrRecipients.
	ParseRecipients func(v *V, content []byte) ([]age.Recipient, error)
	Encrypt         func(plain []byte, rs []age.Recipient) ([]byte, error)

	// Admission (see vault's admit.go): Admit checks every commit from base
	// to theirs; AdmitNew does the same for a repository a clone has just
	// fetched, before it is a vault (opts name the identity that opens a
	// sealed tree's key); RefusedIn checks commit c's tree against
	// the tree base. SkipAdmission is a benchmark's switch.
	Admit         func(ctx context.Context, v *V, base, theirs gitlog.Hash, trust Trust) ([]R, error)
	AdmitNew      func(ctx context.Context, repo *gitlog.Repo, opts O, theirs gitlog.Hash, trust Trust) ([]R, error)
	RefusedIn     func(ctx context.Context, v *V, c, tree, base gitlog.Hash) ([]R, error)
	SkipAdmission func() bool
	NewCommits    func(ctx context.Context, repo *gitlog.Repo, base, head gitlog.Hash) ([]*gitlog.Commit, error)
	// LeaveOut writes tree with each refused entry replaced by base's;
	// WithLeftOut names them in a message's trailers.
	LeaveOut    func(v *V, ctx context.Context, tree, base gitlog.Hash, rs []R) (gitlog.Hash, error)
	WithLeftOut func(msg string, rs []R) string
	// AddRefusals adds to rs those of more at paths rs does not name;
	// RefusedError names every refused entry, wrapping vault.ErrRefused.
	AddRefusals  func(rs, more []R) []R
	RefusedError func(op string, rs []R) error

	// The sealed format (see vault's sealed.go): KeyPath is where a tree
	// keeps its vault key; SealKey returns the key of a root tree (nil for
	// the plain format); SealInfo seals the message and author of a commit
	// of changes on top of parent with the key its tree will hold (the plain
	// format's are left as they are); OpenedMessage opens a commit's message
	// with its tree's key ("" for one that does not open there); SealBlob a
	// memory file's blob in the sealed format (size header, then the age
	// file of the padded plaintext); KeyFile the key file of a key,
	// encrypted to rs, which SealInfo then knows before its blob is written.
	KeyPath       string
	SealKey       func(v *V, root gitlog.Hash) (*seal.Key, error)
	SealInfo      func(v *V, parent gitlog.Hash, changes []gitlog.Change, info *gitlog.CommitInfo) error
	OpenedMessage func(v *V, c *gitlog.Commit) (string, error)
	SealBlob      func(k *seal.Key, plain []byte, rs []age.Recipient) ([]byte, error)
	KeyFile       func(v *V, k *seal.Key, rs []age.Recipient) ([]byte, error)
	// KeychainPath is where a tree of format 3 keeps its older keys;
	// MergeKeychain returns the keychain of a tree sealed under key that
	// merges the commits cs (each one's keychain, its key and key file), and
	// whether it differs from the first one's.
	KeychainPath string
	// NewGeneration makes a vault key of format 3 for a vault encrypted to rs.
	NewGeneration func(rs []age.Recipient) (*seal.Key, error)
	MergeKeychain func(v *V, key *seal.Key, cs ...gitlog.Hash) (data []byte, changed bool, err error)

	// The writers a sync would leave this clone with, against those it holds
	// now (an error wrapping vault.ErrWritersChanged unless accept), and the
	// writers file a merge makes, as keys.
	CheckWriters func(v *V, base, ours, theirs gitlog.Hash, accept bool) (added, removed []keys.Writer, err error)
	MergeWriters func(v *V, baseT, oursT, theirsT gitlog.Hash) (writers, removed []byte, err error)
	// HeldFromRemoved tells whether ours holds, since base, commits signed by
	// a writer theirs removed since base (a merge then squashes them).
	HeldFromRemoved func(v *V, ctx context.Context, base, ours, theirs gitlog.Hash) (bool, error)
	// ReaderAt tells whether the vault's identity is a recipient of commit
	// h's tree.
	ReaderAt func(v *V, h gitlog.Hash) (bool, error)
}

// Trust is what an admission takes on trust beyond each commit's signature
// (vault's trust.go): the writers one of whom must vouch for every first
// commit of a clone's history (their fingerprints; none: trust on first use),
// and whether to take commits of removed writers no current writer vouched
// for.
type Trust struct {
	Pinned        []string
	AcceptRemoved bool
}

// Lent is the *Store[vault.Vault, vault.Options, vault.Refusal] vault fills in.
var Lent any
