package seal

import "sync"

// nameCache keeps the names a Key sealed and opened. A folder's names are
// opened again by every listing of it and every commit that arrives for it,
// and AES-SIV sets up its ciphers anew for each name (a few microseconds).
// Sealing is deterministic, so an entry never goes stale; only what sealed or
// opened without error is kept, and past maxNameCache bytes the cache starts
// over.
type nameCache struct {
	mu     sync.Mutex
	opened map[dirName]string // (folder, stored name): the name
	sealed map[dirName]string // (folder, name): the stored name
	held   int
}

type dirName struct{ dir, name string }

// maxNameCache bounds the bytes of the folders and names a Key's cache holds.
const maxNameCache = 1 << 20

// opening returns the name that stored opens to in the folder dir, if kept.
func (c *nameCache) opening(dir, stored string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name, ok := c.opened[dirName{dir, stored}]
	return name, ok
}

// sealing returns the stored name of name in the folder dir, if kept.
func (c *nameCache) sealing(dir, name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stored, ok := c.sealed[dirName{dir, name}]
	return stored, ok
}

// put keeps name, sealed as stored in the folder dir.
func (c *nameCache) put(dir, name, stored string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 2 * (len(dir) + len(name) + len(stored)) // in both maps
	if c.opened == nil || c.held+n > maxNameCache {
		c.opened, c.sealed, c.held = map[dirName]string{}, map[dirName]string{}, 0
	}
	c.opened[dirName{dir, stored}] = name
	c.sealed[dirName{dir, name}] = stored
	c.held += n
}
