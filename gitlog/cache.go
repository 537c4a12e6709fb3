package gitlog

import "sync"

// treeCache keeps decoded trees by hash. Trees are immutable, so entries never go
// stale; when full, an arbitrary half is dropped, which is cheap and good enough
// for a working set that is mostly the trees on recently written paths.
type treeCache struct {
	mu  sync.Mutex
	max int
	m   map[Hash][]Entry
}

func newTreeCache(max int) *treeCache { return &treeCache{max: max, m: make(map[Hash][]Entry)} }

func (c *treeCache) get(h Hash) ([]Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	es, ok := c.m[h]
	return es, ok
}

func (c *treeCache) put(h Hash, es []Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		n := 0
		for k := range c.m {
			delete(c.m, k)
			if n++; n >= c.max/2 {
				break
			}
		}
	}
	c.m[h] = es
}
