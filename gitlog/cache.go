package gitlog

import "sync"

// treeCache keeps decoded trees by hash. Trees are immutable, so entries never go
// stale; when full, an arbitrary half is dropped, which is cheap and good enough
// for a working set that is mostly the trees on recently written paths.
type treeCache = objCache[[]Entry]

func newTreeCache(max int) *treeCache { return newObjCache[[]Entry](max) }

// objCache keeps decoded objects by hash: objects are immutable, so entries never
// go stale. When full, an arbitrary half is dropped.
type objCache[T any] struct {
	mu  sync.Mutex
	max int
	m   map[Hash]T
}

func newObjCache[T any](max int) *objCache[T] { return &objCache[T]{max: max, m: make(map[Hash]T)} }

func (c *objCache[T]) get(h Hash) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[h]
	return v, ok
}

func (c *objCache[T]) put(h Hash, v T) {
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
	c.m[h] = v
}
