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
	e, found, err := s.lookup(Root)
	if err != nil || !found || e.Hash.IsZero() {
		return Usage{}, err
	}
	return s.v.treeUsage(ctx, Root, e.Hash)
}

// FileCount returns how many memory files the snapshot holds. It reads only
// trees, remembered by hash as Usage does: after the first call in a process a
// call costs the directories a commit changed.
func (s *Snapshot) FileCount(ctx context.Context) (int, error) {
	e, found, err := s.lookup(Root)
	if err != nil || !found || e.Hash.IsZero() {
		return 0, err
	}
	return s.v.treeFiles(ctx, Root, e.Hash)
}

// countCache maps a tree hash to the number of files under it.
var countCache = struct {
	sync.Mutex
	m map[gitlog.Hash]int
}{m: make(map[gitlog.Hash]int)}

func (v *Vault) treeFiles(ctx context.Context, p string, h gitlog.Hash) (int, error) {
	countCache.Lock()
	n, ok := countCache.m[h]
	countCache.Unlock()
	if ok {
		return n, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	es, err := v.repo.ReadTree(h)
	if err != nil {
		return 0, fmt.Errorf("vault: count %s: %w", p, err)
	}
	for _, e := range es {
		if !e.IsDir() {
			n++
			continue
		}
		sub, err := v.treeFiles(ctx, p+"/"+e.Name, e.Hash)
		if err != nil {
			return 0, err
		}
		n += sub
	}
	countCache.Lock()
	if len(countCache.m) >= usageCacheMax {
		clear(countCache.m)
	}
	countCache.m[h] = n
	countCache.Unlock()
	return n, nil
}

// usageCache maps a tree hash to its usage. A tree's hash fixes its blobs and
// so their sizes: the mapping holds for every vault.
var usageCache = struct {
	sync.Mutex
	m map[gitlog.Hash]Usage
}{m: make(map[gitlog.Hash]Usage)}

const usageCacheMax = 1 << 16

func (v *Vault) treeUsage(ctx context.Context, p string, h gitlog.Hash) (Usage, error) {
	usageCache.Lock()
	u, ok := usageCache.m[h]
	usageCache.Unlock()
	if ok {
		return u, nil
	}
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
			sub, err := v.treeUsage(ctx, cp, e.Hash)
			if err != nil {
				return u, err
			}
			u.Files += sub.Files
			u.Bytes += sub.Bytes
			continue
		}
		n, err := v.fileSize(cp, e.Hash)
		if err != nil {
			return u, err
		}
		u.Files++
		u.Bytes += n
	}
	usageCache.Lock()
	if len(usageCache.m) >= usageCacheMax {
		clear(usageCache.m)
	}
	usageCache.m[h] = u
	usageCache.Unlock()
	return u, nil
}
