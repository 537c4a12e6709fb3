package vault

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/config"

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
)

// readQuotas reads the limits beyond the file size and the view length from the
// [memvault] section of the vault's config: maxVaultSize, maxFiles and
// maxRequestLine, and the secretPolicy writes follow. A value that is missing or not a positive integer keeps the
// default.
func readQuotas(s *config.Section, l *Limits) {
	if n, err := strconv.ParseInt(s.Option("maxVaultSize"), 10, 64); err == nil && n > 0 {
		l.MaxVaultSize = n
	}
	if n, err := strconv.Atoi(s.Option("maxFiles")); err == nil && n > 0 {
		l.MaxFiles = n
	}
	if n, err := strconv.Atoi(s.Option("maxRequestLine")); err == nil && n > 0 {
		l.MaxRequestLine = n
	}
	l.SecretPolicy = s.Option("secretPolicy")
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
// The error wraps ErrDecrypt for a blob that is not an age file.
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
	return s.v.treeUsage(ctx, Root, e.Hash, sized)
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

// treeUsage counts the files under the tree h at p, and with sized adds up
// their plaintext sizes, which reads each blob's header; without, it reads only
// trees.
func (v *Vault) treeUsage(ctx context.Context, p string, h gitlog.Hash, sized bool) (Usage, error) {
	if u, ok := v.trees.get(h, sized); ok {
		return u, nil
	}
	var u Usage
	if err := ctx.Err(); err != nil {
		return u, err
	}
	es, err := v.repo.ReadTree(h)
	if err != nil {
		return u, fmt.Errorf("vault: usage %s: %w", p, err)
	}
	for _, e := range es {
		cp := p + "/" + e.Name
		if e.IsDir() {
			sub, err := v.treeUsage(ctx, cp, e.Hash, sized)
			if err != nil {
				return u, err
			}
			u.Files += sub.Files
			u.Bytes += sub.Bytes
			continue
		}
		u.Files++
		if sized {
			n, err := v.fileSize(cp, e.Hash)
			if err != nil {
				return u, err
			}
			u.Bytes += n
		}
	}
	v.trees.put(h, treeStat{u: u, sized: sized})
	return u, nil
}
