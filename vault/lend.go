package vault

import (
	"context"
	"fmt"
	"time"

	"filippo.io/age"
	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/storehook"
)

func init() { storehook.Lent = lent }

// lent is what package vault/exchange (sync, merge, clone) works on of vault's
// internals, lent through vault/internal/storehook so that vault's exported
// surface stays the store's: see that package.
var lent = &storehook.Store[Vault, Options, Refusal]{
	MemDir: memDir, RecipientsPath: recipientsPath,
	MaxPathLen: maxPathLen, MaxSegmentLen: maxSegmentLen,

	TrCommand: trCommand, TrPath: trPath, TrNewPath: trNewPath, TrConflict: trConflict, TrSquashed: trSquashed,
	FormatMessage: func(subject string, trs [][2]string) string {
		ts := make([]trailer, len(trs))
		for i, t := range trs {
			ts[i] = trailer{t[0], t[1]}
		}
		return formatMessage(subject, ts)
	},
	TrailerValues: func(msg string, keys ...string) []string {
		_, ts := parseMessage(msg)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = trailerValue(ts, k)
		}
		return out
	},
	TreePath: treePath,
	OneLine:  oneLine,
	Fill:     (*Options).fill,

	Repo:     func(v *Vault) *gitlog.Repo { return v.repo },
	Now:      func(v *Vault) time.Time { return v.opts.Now() },
	Signer:   (*Vault).signerFor,
	ReadBlob: (*Vault).readBlob,
	Recipients: func(v *Vault, c gitlog.Hash) ([]byte, error) {
		s, err := v.snapshotAt(c)
		if err != nil {
			return nil, err
		}
		return s.recipientsContent()
	},
	ParseRecipients: func(v *Vault, content []byte) ([]age.Recipient, error) { return v.keys.parseRecipients(content) },
	Encrypt:         encrypt,

	Admit: func(ctx context.Context, v *Vault, base, theirs gitlog.Hash, trust storehook.Trust) ([]Refusal, error) {
		held, err := v.repo.Head()
		if err != nil {
			return nil, fmt.Errorf("vault: admit: %w", err)
		}
		return admit(ctx, v.repo, v.limits, v.admitKey(theirs), base, theirs,
			trustRules{held: held, pinned: trust.Pinned, acceptRemoved: trust.AcceptRemoved})
	},
	AdmitNew: func(ctx context.Context, repo *gitlog.Repo, opts Options, theirs gitlog.Hash, trust storehook.Trust) ([]Refusal, error) {
		limits := readLimits(repo)
		repo.SetBlobLimit(blobLimit(limits))
		// Not a vault yet: a sealed tree's key is opened with the
		// identity the clone will read with.
		keysOnly := &Vault{repo: repo, opts: opts, limits: limits, keys: newKeyring(opts, repo)}
		return admit(ctx, repo, limits, keysOnly.admitKey(theirs), gitlog.ZeroHash, theirs,
			trustRules{pinned: trust.Pinned, acceptRemoved: trust.AcceptRemoved})
	},
	RefusedIn: func(ctx context.Context, v *Vault, c, tree, base gitlog.Hash) ([]Refusal, error) {
		return refusedIn(ctx, v.repo, v.limits, v.admitKey(c), c, tree, base)
	},
	SkipAdmission: func() bool { return skipAdmission.Load() || skipArrivalTree.Load() },
	NewCommits:    newCommits,
	LeaveOut:      (*Vault).leaveOut,
	WithLeftOut:   withLeftOut,
	AddRefusals:   addRefusals,
	RefusedError:  refusedError,

	KeyPath:       keyPath,
	SealKey:       (*Vault).sealKeyAt,
	SealInfo:      (*Vault).sealInfo,
	OpenedMessage: (*Vault).openedMessage,
	SealBlob:      sealBlob,
	KeyFile:       (*Vault).keyFile,
	KeychainPath:  keychainPath,
	NewGeneration: newGeneration,
	MergeKeychain: (*Vault).mergeKeychain,

	CheckWriters:    (*Vault).checkWriters,
	MergeWriters:    (*Vault).mergeWriters,
	HeldFromRemoved: (*Vault).heldFromRemoved,
	ReaderAt:        (*Vault).readerAt,
}
