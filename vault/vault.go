// Package vault is the encrypted memory store: a tree of memory files under
// /memories, each kept as age ciphertext in a bare git repository, where every
// change is one commit.
//
// Open a vault with Open (or create one with Init), read the current state through
// a Snapshot, and change it inside Update, which holds the vault's writer lock and
// turns the staged change into one durable commit. Plaintext lives only in memory:
// nothing decrypted is ever written to disk.
//
// The history is there to see and undo: Log lists commits (of the vault or one
// path), Show and Diff decrypt what changed, SnapshotAt reads any revision (see
// Resolve), and Restore, Revert and Rollback take changes back, each as one new
// commit; Checkpoint names a point to come back to. History is never rewritten.
//
// Beside it: vault/keys reads and writes the key files (identities, recipients,
// writers).
//
// Sync fetches from a git remote, admits what arrived (admit.go, trust.go),
// fast-forwards or merges on plaintext, and pushes; Clone makes a vault from a
// remote. They live here because a merge works on what only the vault holds:
// its keys, its sealed names and messages, its signing and its admission rules.
package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// formatVersion is the version of the storage format this package writes.
const formatVersion = "1"

// The files of a vault's tree besides the memories.
const (
	memDir         = "memories"
	recipientsPath = keys.RecipientsPath
	formatPath     = ".memvault/format"
	attributesPath = ".gitattributes"
)

// Options configure Open and Init.
type Options struct {
	// IdentityFile is the age identity used to decrypt; "" means DefaultIdentityFile.
	IdentityFile string
	// ReadIdentities are more identity files, used only to decrypt: tried
	// after IdentityFile, as one set with it. The keys a rotation retired
	// (IDENTITY.old, IDENTITY.old.N beside IdentityFile and each of these) are
	// always tried too, so history from before a Rekey reads with nothing
	// more to pass.
	ReadIdentities []string
	// Passphrase is asked for a passphrase the identity needs (a protected age
	// identity file, an encrypted SSH key, an age plugin's PIN); prompt says
	// which. It is called once per Vault, not once per file. nil means a
	// protected identity fails with ErrPassphrase.
	Passphrase func(prompt string) ([]byte, error)
	// Now gives commit times; nil means time.Now.
	Now func() time.Time
	// Plain makes Init create the vault in the plain format, whose git host
	// reads every file and folder name, commit subject, trailer and exact
	// size (only contents are encrypted). The zero value makes the sealed
	// format, which hides them all (see vault/seal). Plain is for a vault
	// whose names must be readable with git alone, or hold components of
	// 144 to 255 bytes (the sealed format stores at most seal.MaxName); it
	// is also a little faster. Open ignores it: a vault's tree says its
	// format.
	Plain bool
	// Name is the name this identity goes by as a member of the vault, which
	// Init writes beside its keys; "" writes none. memvault records no login
	// or host name of its own.
	Name string
}

// InitResult says what Init made.
type InitResult struct {
	VaultCreated    bool
	IdentityCreated bool
	Recipient       string // the identity's public recipient
	// NotRecipient is set when the vault already existed and Recipient is not
	// among its recipients: the identity cannot read it until someone who can
	// adds it.
	NotRecipient bool
}

// Vault is an open memory vault. Its methods are safe for concurrent use.
type Vault struct {
	repo   *gitlog.Repo
	opts   Options
	limits Limits
	keys   *keyring
	cache  *plainCache
	trees  *treeStats
	sign   *signingKey
	// writers parses each writers file once.
	writers writersCache
	// seals opens each vault key of the sealed format once.
	seals sealKeys
	// line is the review line's state as last read (review.go).
	line lineCache
}

// plainCacheBudget bounds the decrypted content a Vault keeps: three times
// the plaintext of a 10,000-file vault of 1 KB files, and within the 150 MB a
// long-lived process may hold.
const plainCacheBudget = 32 << 20

func newVault(repo *gitlog.Repo, opts Options) *Vault {
	repo.SetClock(opts.Now) // the reflog records moves in the vault's time
	keys := newKeyring(opts, repo)
	v := &Vault{repo: repo, opts: opts, keys: keys, cache: newPlainCache(plainCacheBudget), trees: newTreeStats(),
		sign: &signingKey{identity: opts.IdentityFile, keys: keys}}
	keys.generations = v.seals.generationIDs
	return v
}

// DefaultDir is where the vault lives when none is named:
// $XDG_DATA_HOME/memvault/default.git (~/.local/share/... when unset).
func DefaultDir() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("vault: default dir: %w", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "memvault", "default.git"), nil
}

func (o *Options) fill() error {
	if o.IdentityFile == "" {
		p, err := keys.DefaultIdentityFile()
		if err != nil {
			return err
		}
		o.IdentityFile = p
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Init creates a vault at dir whose files are encrypted to the identity at
// opts.IdentityFile, generating that identity (mode 0600) if the file does not
// exist. If dir already holds a vault, Init opens it and reports VaultCreated false.
// A git repository at dir that holds objects but no vault on its main branch is
// left as it is, with an error wrapping ErrHoldsObjects.
func Init(ctx context.Context, dir string, opts Options) (*Vault, InitResult, error) {
	var res InitResult
	if err := opts.fill(); err != nil {
		return nil, res, err
	}
	recipient, created, err := keys.LoadOrCreate(opts.IdentityFile, opts.Passphrase)
	if err != nil {
		return nil, res, err
	}
	res.IdentityCreated, res.Recipient = created, recipient
	if v, err := Open(ctx, dir, opts); err == nil {
		res.NotRecipient = !v.hasRecipient(ctx, recipient)
		return v, res, nil
	} else if !errors.Is(err, ErrNotVault) {
		return nil, res, err
	}
	repo, err := gitlog.Open(dir)
	if err == nil {
		// No vault on main, yet objects: a vault whose branch was lost (or
		// another repository). A new first commit would hide its history.
		if held, herr := repo.HoldsObjects(); herr != nil || held {
			repo.Close()
			if herr != nil {
				return nil, res, fmt.Errorf("vault: init %s: %w", dir, herr)
			}
			return nil, res, fmt.Errorf("vault: init %s: %w", dir, ErrHoldsObjects)
		}
	}
	if errors.Is(err, gitlog.ErrNotRepo) {
		repo, err = gitlog.Init(dir)
	}
	if err != nil {
		return nil, res, fmt.Errorf("vault: init %s: %w", dir, err)
	}
	// A folder that was there already keeps its mode otherwise: 0755 would
	// let every local user read the config, and a remote's token in it.
	if err := os.Chmod(dir, 0o700); err != nil {
		repo.Close()
		return nil, res, fmt.Errorf("vault: init %s: %w", dir, err)
	}
	v := newVault(repo, opts)
	recipients := "# memvault: every memory file is encrypted to each recipient below.\n" + res.Recipient + "\n"
	if opts.Name != "" {
		recipients = "# memvault: every memory file is encrypted to each recipient below.\n\n# " + opts.Name + "\n" + res.Recipient + "\n"
	}
	// The creator is the vault's first writer: from the first commit on, a
	// commit is believed only when a writer signed it.
	pub, err := v.sign.publicKey()
	if err != nil {
		repo.Close()
		return nil, res, fmt.Errorf("vault: init %s: the signing key: %w", dir, err)
	}
	writers := keys.FormatWriters([]keys.Writer{keys.WriterOf(pub, opts.Name)})
	changes := []gitlog.Change{
		{Op: gitlog.Put, Path: formatPath, Data: []byte(formatVersion + "\n")},
		{Op: gitlog.Put, Path: recipientsPath, Data: []byte(recipients)},
		{Op: gitlog.Put, Path: keys.WritersPath, Data: writers},
		{Op: gitlog.Put, Path: attributesPath, Data: []byte(memDir + "/** diff=memvault\n")},
	}
	if !opts.Plain {
		if changes, err = v.sealedInit(changes, recipients); err != nil {
			repo.Close()
			return nil, res, fmt.Errorf("vault: init %s: %w", dir, err)
		}
	}
	w, err := repo.Lock(ctx)
	if err == nil {
		err = v.commit(w, gitlog.ZeroHash, "", "", changes, Meta{Command: "init"})
		w.Unlock()
	}
	repo.Close()
	if err != nil {
		return nil, res, err
	}
	v, err = Open(ctx, dir, opts)
	res.VaultCreated = err == nil
	return v, res, err
}

// Open opens the vault at dir. It returns an error wrapping ErrNotVault if dir
// holds none, and ErrDamaged if its main branch cannot be read. The identity is read when something first needs decrypting.
func Open(ctx context.Context, dir string, opts Options) (*Vault, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := notAFolder(dir); err != nil {
		return nil, err
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vault: open %s: no such folder: %w", dir, ErrNotVault)
	}
	if err == nil {
		if err := keys.OthersCanWrite(dir, fi.Mode(), "chmod 700"); err != nil {
			return nil, err
		}
	}
	repo, err := gitlog.Open(dir)
	if errors.Is(err, gitlog.ErrNotRepo) {
		return nil, fmt.Errorf("vault: open %s: %w", dir, ErrNotVault)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: open %s: %w", dir, err)
	}
	v := newVault(repo, opts)
	head, err := repo.Head()
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrDamaged, err)
	} else if head.IsZero() {
		err = ErrNotVault
	}
	if err == nil {
		var root gitlog.Hash
		if root, err = repo.RootTree(head); err != nil {
			err = fmt.Errorf("%w: %v", ErrDamaged, err)
		} else if _, lerr := repo.Lookup(root, formatPath); lerr != nil {
			err = ErrNotVault
		} else if _, lerr := repo.Lookup(root, keyPath); lerr == nil {
			v.seals.sealedHead = true
		}
	}
	if err != nil {
		repo.Close()
		return nil, fmt.Errorf("vault: open %s: %w", dir, err)
	}
	v.limits = readLimits(repo)
	repo.SetBlobLimit(blobLimit(v.limits))
	return v, nil
}

// Close releases the vault's files.
func (v *Vault) Close() error { return v.repo.Close() }

// IndexHistory starts completing the history index in the background, so that
// a long-lived process answers its first per-file history at once even on a
// history that a clone or sync brought. Close stops it; what it indexed is kept
// for every later process.
func (v *Vault) IndexHistory() {
	if head, err := v.repo.Head(); err == nil {
		v.repo.IndexInBackground(head)
	}
}

// Dir is the vault's repository directory.
func (v *Vault) Dir() string { return v.repo.Dir() }

// Head returns the commit the vault's main branch names now, as any process
// left it: what a watcher compares with the head it last saw.
func (v *Vault) Head() (string, error) {
	h, err := v.repo.Head()
	if err != nil {
		return "", fmt.Errorf("vault: %w", err)
	}
	return h.String(), nil
}

// Watch returns a channel that receives a value soon after the vault's branch
// may have moved, by this process or any other, until ctx is done; then it is
// closed. A value may stand for several commits, or for none, so a reader looks
// at the head itself (Snapshot). Where the system cannot watch files the error
// wraps ErrWatchUnsupported, and a reader polls instead.
func (v *Vault) Watch(ctx context.Context) (<-chan struct{}, error) { return v.repo.Watch(ctx) }

// IdentityFile is the path of the identity the vault decrypts with.
func (v *Vault) IdentityFile() string { return v.opts.IdentityFile }

// Limits are the vault's limits: its config's [memvault] maxFileSize and viewLimit,
// or DefaultLimits.
func (v *Vault) Limits() Limits { return v.limits }

func readLimits(repo *gitlog.Repo) Limits {
	l := DefaultLimits
	s := repo.ConfigSection("memvault")
	if n, err := strconv.ParseInt(s["maxfilesize"], 10, 64); err == nil && n > 0 {
		l.MaxFileSize = n
	}
	if n, err := strconv.Atoi(s["viewlimit"]); err == nil && n > 0 {
		l.ViewLimit = n
	}
	readQuotas(s, &l)
	return l
}

// hasRecipient tells whether key is among the vault's current recipients.
func (v *Vault) hasRecipient(ctx context.Context, key string) bool {
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return false
	}
	rs, err := snap.Recipients(ctx)
	if err != nil {
		return false
	}
	for _, r := range rs {
		if r.Key == key {
			return true
		}
	}
	return false
}
