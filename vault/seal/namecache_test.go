package seal

import (
	"fmt"
	"strings"
	"testing"
)

// clear empties the cache, for benchmarks of the cryptography itself.
func (c *nameCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opened, c.sealed, c.held = nil, nil, 0
}

// TestNameCacheBounded: a key that seals and opens many more names than its
// cache holds keeps the cache within its bound, and each name still seals and
// opens as it did the first time.
func TestNameCacheBounded(t *testing.T) {
	k := testKey(t, 1)
	dir := "/memories/" + strings.Repeat("d", 200)
	n := 3 * maxNameCache / (2 * (len(dir) + MaxName + 255))
	first := map[string]string{}
	for round := range 2 {
		for i := range n {
			name := fmt.Sprintf("%0*d", MaxName, i)
			s, err := k.SealName(dir, name)
			if err != nil {
				t.Fatal(err)
			}
			if round == 0 {
				first[name] = s
			} else if s != first[name] {
				t.Fatalf("SealName of name %d gave %q, then %q", i, first[name], s)
			}
			if got, err := k.OpenName(dir, s); err != nil || got != name {
				t.Fatalf("OpenName of name %d = %q, %v", i, got, err)
			}
			if k.cache.held > maxNameCache {
				t.Fatalf("the cache holds %d bytes, over its bound of %d", k.cache.held, maxNameCache)
			}
		}
	}
}
