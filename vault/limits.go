package vault

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/memvault/memvault/gitlog"
)

// Defaults of the limits readQuotas reads; generous, so that only a runaway
// or hostile agent meets them. The total size has no default limit: checking it
// reads the length of every current file once per process (a whole
// `memvault tool` process would pay that on every write), so it is opt-in.
const (
	DefaultMaxVaultSize   = 0 // bytes of plaintext in all current files; 0: no limit
	DefaultMaxFiles       = 50_000
	DefaultMaxRequestLine = 8 << 20 // bytes in one `memvault serve` request line
	// An agent's command, or its session's run, that deletes or empties
	// more than 5 files, or more than a quarter of the memory's, waits for
	// a person.
	DefaultMassDeleteFiles = 5
	DefaultMassDeleteShare = 25
)

// readQuotas reads the limits beyond the file size and the view length from the
// [memvault] section of the vault's config: maxVaultSize, maxFiles,
// maxRequestLine, massDeleteFiles and massDeleteShare (a percentage), the
// secretPolicy writes follow, and review (a git boolean). A value that is
// missing or not a positive integer keeps the default.
// The keys of s are lower-cased (see gitlog's ConfigSection).
func readQuotas(s map[string]string, l *Limits) {
	if n, err := strconv.ParseInt(s["maxvaultsize"], 10, 64); err == nil && n > 0 {
		l.MaxVaultSize = n
	}
	if n, err := strconv.Atoi(s["maxfiles"]); err == nil && n > 0 {
		l.MaxFiles = n
	}
	if n, err := strconv.Atoi(s["maxrequestline"]); err == nil && n > 0 {
		l.MaxRequestLine = n
	}
	if n, err := strconv.Atoi(s["massdeletefiles"]); err == nil && n > 0 {
		l.MassDeleteFiles = n
	}
	if n, err := strconv.Atoi(s["massdeleteshare"]); err == nil && n > 0 {
		l.MassDeleteShare = n
	}
	l.SecretPolicy = s["secretpolicy"]
	switch strings.ToLower(strings.TrimSpace(s["review"])) {
	case "true", "yes", "on", "1":
		l.Review = true
	}
}

// Usage is how much a memory tree holds.
type Usage struct {
	Files int   // memory files
	Bytes int64 // bytes of plaintext in them
}

// Usage returns how many memory files the snapshot holds and their plaintext
// size. Sizes come from the ciphertexts' lengths, without decrypting. Each
// directory's usage is remembered by its tree hash, so after the first call
// in a process a call costs the directories a commit changed, not the vault.
// A bad entry (see ErrBadEntry) counts as a file of no bytes.
func (s *Snapshot) Usage(ctx context.Context) (Usage, error) {
	return s.treeUsage(ctx, true)
}

// FileCount returns how many memory files the snapshot holds. It reads only
// trees, remembered by hash as Usage does: after the first call in a process a
// call costs the directories a commit changed.
func (s *Snapshot) FileCount(ctx context.Context) (int, error) {
	u, err := s.treeUsage(ctx, false)
	return u.Files, err
}

func (s *Snapshot) treeUsage(ctx context.Context, sized bool) (Usage, error) {
	e, found, err := s.lookup(Root)
	if err != nil || !found || e.Hash.IsZero() {
		return Usage{}, err
	}
	return s.v.treeUsage(ctx, s.names, Root, e.Hash, sized)
}

// treeStats remembers the usage of trees by hash. A tree's hash fixes its
// blobs and so their sizes: an entry never goes stale.
type treeStats struct {
	mu sync.Mutex
	m  map[gitlog.Hash]treeStat
}

type treeStat struct {
	u     Usage
	sized bool // u.Bytes is known
}

const treeStatsMax = 1 << 16

func newTreeStats() *treeStats { return &treeStats{m: make(map[gitlog.Hash]treeStat)} }

func (c *treeStats) get(h gitlog.Hash, sized bool) (Usage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[h]
	return st.u, ok && (st.sized || !sized)
}

func (c *treeStats) put(h gitlog.Hash, st treeStat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= treeStatsMax {
		clear(c.m)
	}
	if old, ok := c.m[h]; !ok || !old.sized {
		c.m[h] = st
	}
}

// treeUsage counts the files under the tree h at p, in a tree whose names
// are ns, and with sized adds up their plaintext sizes, which reads each
// blob's header (the sealed size header under ns's key, in the sealed
// format); without, it reads only trees.
func (v *Vault) treeUsage(ctx context.Context, ns codec, p string, h gitlog.Hash, sized bool) (Usage, error) {
	if u, ok := v.trees.get(h, sized); ok {
		return u, nil
	}
	var u Usage
	if err := ctx.Err(); err != nil {
		return u, err
	}
	es, err := v.repo.ReadTree(h)
	if errors.Is(err, gitlog.ErrWrongType) || errors.Is(err, gitlog.ErrTooLarge) {
		return u, nil // a bad entry holds no memory (see badentry.go)
	}
	if err != nil {
		return u, fmt.Errorf("vault: usage %s: %w", p, err)
	}
	for _, e := range es {
		cp := p + "/" + e.Name
		if e.IsDir() {
			sub, err := v.treeUsage(ctx, ns, cp, e.Hash, sized)
			if err != nil {
				return u, err
			}
			u.Files += sub.Files
			u.Bytes += sub.Bytes
			continue
		}
		u.Files++
		if sized {
			n, err := v.fileSizeIn(ns, cp, e.Hash)
			if err != nil && !errors.Is(err, ErrBadEntry) {
				return u, err
			}
			u.Bytes += n
		}
	}
	v.trees.put(h, treeStat{u: u, sized: sized})
	return u, nil
}

// growth is what a change set adds to the vault: files and bytes of plaintext,
// negative when it takes away more than it adds, and the memory paths of the
// first changes that added each.
type growth struct {
	files                int
	bytes                int64
	filesPath, bytesPath string
}

// add counts a change at memory path p that adds files and bytes.
func (g *growth) add(p string, files int, bytes int64) {
	if files > 0 && g.filesPath == "" {
		g.filesPath = p
	}
	if bytes > 0 && g.bytesPath == "" {
		g.bytesPath = p
	}
	g.files += files
	g.bytes += bytes
}

// limited tells whether the vault has a limit on its file count or its size,
// and so whether changes must be counted at all.
func (l Limits) limited() bool { return l.MaxFiles > 0 || l.MaxVaultSize > 0 }

// entryUsage is what entry e holds, in a tree whose names are ns: a file, or
// a directory's files. The sizes are read only when the vault limits its size.
func (v *Vault) entryUsage(ctx context.Context, ns codec, p string, e gitlog.Entry) (Usage, error) {
	if e.IsDir() {
		return v.treeUsage(ctx, ns, p, e.Hash, v.limits.MaxVaultSize > 0)
	}
	u := Usage{Files: 1}
	if v.limits.MaxVaultSize > 0 {
		n, err := v.fileSizeIn(ns, p, e.Hash)
		if err != nil {
			return u, err
		}
		u.Bytes = n
	}
	return u, nil
}

// checkGrowth fails a change set that grows the vault at base past its limit on
// files or on total size, with a *LimitError. A change set that adds no file
// passes the file limit and one that adds no bytes passes the size limit, so a
// vault over a limit (lowered in the config, or reached through a merge) can
// always be shrunk back under it.
//
// This is the one place the vault's file count and size limits are enforced:
// every change made through Update, and every restore, revert and rollback,
// comes here before it is committed. Sync's merges do not: a merge joins what
// two replicas hold already, and refusing it would leave the replicas apart
// for good or drop one side's memories, so a merge may take a vault over its
// limits, after which only changes that shrink it pass.
func (v *Vault) checkGrowth(ctx context.Context, base *Snapshot, g growth) error {
	l := v.limits
	if l.MaxFiles > 0 && g.files > 0 {
		n, err := base.FileCount(ctx)
		if err != nil {
			return err
		}
		if n+g.files > l.MaxFiles {
			return &LimitError{Path: g.filesPath, Would: int64(n + g.files), Limit: int64(l.MaxFiles), Err: ErrTooManyFiles}
		}
	}
	if l.MaxVaultSize > 0 && g.bytes > 0 {
		u, err := base.Usage(ctx)
		if err != nil {
			return err
		}
		if n := u.Bytes + g.bytes; n > l.MaxVaultSize {
			return &LimitError{Path: g.bytesPath, Would: n, Limit: l.MaxVaultSize, Err: ErrVaultFull}
		}
	}
	return nil
}

// changesGrowth is what changes, made on the tree root, add to the vault. A
// change at a path an earlier change deleted (or deleted a parent of) counts
// as adding to nothing. A file it puts over the file size limit fails it with
// a *LimitError.
func (v *Vault) changesGrowth(ctx context.Context, root gitlog.Hash, changes []gitlog.Change) (growth, error) {
	var g growth
	// The names of root, opened in a sealed tree: a file's usage is read
	// under its tree's key, and a limit's error names the memory path.
	ns, err := v.namesOfRoot(root)
	if err != nil {
		return g, err
	}
	var deleted []string
	gone := func(tp string) bool {
		for _, d := range deleted {
			if tp == d || strings.HasPrefix(tp, d+"/") {
				return true
			}
		}
		return false
	}
	for _, c := range changes {
		if c.Op == gitlog.Move || !strings.HasPrefix(c.Path, memDir+"/") && c.Path != memDir {
			continue
		}
		p, err := ns.memPath(c.Path)
		if err != nil {
			p = memPath(c.Path) // sealed under another key (a rotation): named as stored
		}
		var old, nu Usage
		if !gone(c.Path) {
			e, err := v.repo.Lookup(root, c.Path)
			switch {
			case err == nil:
				if old, err = v.entryUsage(ctx, ns, p, e); err != nil {
					return g, err
				}
			case !errors.Is(err, gitlog.ErrNotFound) && !errors.Is(err, gitlog.ErrNotDir):
				return g, fmt.Errorf("vault: %s: %w", p, err)
			}
		}
		switch c.Op {
		case gitlog.Delete:
			deleted = append(deleted, c.Path)
		case gitlog.Put:
			n, err := v.stagedPlainSize(root, p, c.Data)
			if err != nil {
				return g, fmt.Errorf("vault: %s: %w", p, err)
			}
			nu = Usage{Files: 1, Bytes: n}
		case gitlog.Link:
			e, err := v.repo.LinkEntry(c.Hash)
			if err != nil {
				return g, fmt.Errorf("vault: %s: %w", p, err)
			}
			if nu, err = v.entryUsage(ctx, ns, p, e); err != nil {
				return g, err
			}
			if !e.IsDir() {
				if nu.Bytes, err = v.fileSizeIn(ns, p, e.Hash); err != nil {
					return g, err
				}
			}
		}
		if c.Op != gitlog.Delete && nu.Files == 1 && nu.Bytes > v.limits.MaxFileSize {
			return g, &LimitError{Path: p, Would: nu.Bytes, Limit: v.limits.MaxFileSize, Err: ErrTooLarge}
		}
		g.add(p, nu.Files-old.Files, nu.Bytes-old.Bytes)
	}
	return g, nil
}
