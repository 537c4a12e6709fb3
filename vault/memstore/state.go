package memstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memvault/memvault/vault/internal/durable"
)

// stateVersion is the format of a state file; a reader that meets another
// refuses it rather than guess.
const stateVersion = 1

// state is what a vault knows of one store since their last sync, kept in
// the vault's local state folder (it never syncs). It holds no plaintext: a
// path is kept as its SHA-256, a content as the SHA-256 the API compares.
type state struct {
	Version int    `json:"version"`
	Store   string `json:"store"`
	// After and Seen are the pull's cursor: versions made before After are
	// applied, and so are those of After's instant whose ids are in Seen.
	After time.Time `json:"after"`
	Seen  []string  `json:"seen,omitempty"`
	// Mine are versions this vault's pushes wrote: a pull skips them.
	Mine []string `json:"mine,omitempty"`
	// SetAside are the newest versions the vault refused, which the cursor
	// has passed (see Result.SetAside).
	SetAside []string `json:"set_aside,omitempty"`
	// Memories are the store's memories as of the last sync, by id.
	Memories map[string]synced `json:"memories"`
	// Commit is the vault's head when the store last matched it: the base
	// of a merge when both sides changed a file.
	Commit string `json:"commit,omitempty"`

	byKey map[string]string // pathKey -> memory id
}

type synced struct {
	Path string `json:"path"` // pathKey of the vault path
	SHA  string `json:"sha"`  // SHA-256 of the content, as the store reports it
}

// pathKey stands for a vault path in the state file.
func pathKey(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}

// contentSHA is the store's content_sha256 of content.
func contentSHA(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// statePath is where a vault keeps its state for store.
func statePath(vaultDir, store string) string {
	return filepath.Join(vaultDir, "memvault", "memory-store-"+pathKey(store)[:16]+".json")
}

func loadState(vaultDir, store string) (*state, error) {
	data, err := os.ReadFile(statePath(vaultDir, store))
	if errors.Is(err, fs.ErrNotExist) {
		s := &state{Version: stateVersion, Store: store, Memories: map[string]synced{}}
		s.index()
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("the sync state %s is damaged (%v): remove it to pull the whole store again", statePath(vaultDir, store), err)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("the sync state %s is of format %d, which this memvault does not know: upgrade memvault", statePath(vaultDir, store), s.Version)
	}
	if s.Store != store {
		return nil, fmt.Errorf("the sync state %s is for store %q, not %q", statePath(vaultDir, store), s.Store, store)
	}
	if s.Memories == nil {
		s.Memories = map[string]synced{}
	}
	s.index()
	return &s, nil
}

// save writes the state durably, whole or not at all.
func (s *state) save(vaultDir string) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return durable.WriteFile(statePath(vaultDir, s.Store), data, 0o600, true)
}

// applied says whether a pull has applied v already, or a push of this
// vault wrote it; the latter is then forgotten, as it is behind the cursor.
func (s *state) applied(v Version) bool {
	if v.Time.Before(s.After) || slices.Contains(s.Seen, v.ID) {
		return true
	}
	if i := slices.Index(s.Mine, v.ID); i >= 0 {
		s.Mine = slices.Delete(s.Mine, i, i+1)
		s.advance(v)
		return true
	}
	return false
}

// advance moves the cursor past v.
func (s *state) advance(v Version) {
	if v.Time.After(s.After) {
		s.After, s.Seen = v.Time, nil
	}
	s.Seen = append(s.Seen, v.ID)
}

// set records memory id as synced at vault path p with content SHA sha;
// an empty p forgets it.
func (s *state) set(id, p, sha string) {
	if old, ok := s.Memories[id]; ok {
		delete(s.byKey, old.Path)
	}
	if p == "" {
		delete(s.Memories, id)
		return
	}
	k := pathKey(p)
	s.Memories[id] = synced{Path: k, SHA: sha}
	s.byKey[k] = id
}

// at finds the memory synced at vault path p.
func (s *state) at(p string) (id string, m synced, ok bool) {
	id, ok = s.byKey[pathKey(p)]
	return id, s.Memories[id], ok
}

// index builds byKey from Memories.
func (s *state) index() {
	s.byKey = make(map[string]string, len(s.Memories))
	for id, m := range s.Memories {
		s.byKey[m.Path] = id
	}
}
