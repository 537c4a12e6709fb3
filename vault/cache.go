package vault

import (
	"sync"

	"github.com/memvault/memvault/gitlog"
)

// plainCache keeps decrypted content and plaintext sizes in memory, keyed by the
// hash of the ciphertext blob, so long-running processes decrypt each version of
// a file once. It never touches the disk. When over its byte budget it drops
// arbitrary entries.
type plainCache struct {
	mu     sync.Mutex
	budget int
	used   int
	plain  map[gitlog.Hash][]byte
	sizes  map[gitlog.Hash]int64
}

func newPlainCache(budget int) *plainCache {
	return &plainCache{budget: budget, plain: map[gitlog.Hash][]byte{}, sizes: map[gitlog.Hash]int64{}}
}

func (c *plainCache) get(h gitlog.Hash) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.plain[h]
	return b, ok
}

func (c *plainCache) put(h gitlog.Hash, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(b) > c.budget/4 {
		return
	}
	for k, old := range c.plain {
		if c.used+len(b) <= c.budget {
			break
		}
		delete(c.plain, k)
		c.used -= len(old)
	}
	if _, ok := c.plain[h]; !ok {
		c.plain[h] = b
		c.used += len(b)
	}
	c.sizes[h] = int64(len(b))
}

func (c *plainCache) size(h gitlog.Hash) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.sizes[h]
	return n, ok
}

func (c *plainCache) putSize(h gitlog.Hash, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sizes) > 1<<20 {
		clear(c.sizes)
	}
	c.sizes[h] = n
}
