// Package memstoreapitest is a stand-in for the memory stores API on loopback,
// for tests of memstoreapi, of memstore through it, and of the commands built on them: the endpoints the
// SDK's memory store services call, with cursor pagination, content_sha256
// preconditions (409), 404, redaction, and faults on demand (429, 5xx).
package memstoreapitest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
)

// Server is one memory store behind the API's endpoints.
type Server struct {
	*httptest.Server
	Store string

	mu       sync.Mutex
	clock    time.Time
	memories map[string]*memory // by id
	versions []*version         // oldest first
	faults   []int              // statuses the next requests get
	Requests int                // requests served, faults included
	// Step is how far the store's clock moves for each change: a millisecond
	// unless set before the first write.
	Step time.Duration
	// Contents counts the version contents sent (full-view listings and
	// reads of one version); Widest is the most versions one full-view
	// listing matched, its pages together: what a client held at once.
	Contents, Widest int
	nextID           int
	race             func() // run before the next create, update or delete
}

type memory struct {
	id, path, content, version string
	created, updated           time.Time
}

type version struct {
	id, memory, op, path, content string
	actor                         map[string]string
	at                            time.Time
	redacted                      time.Time
}

// Actor says who made a change: session, API key or user.
type Actor = map[string]string

// Session is a session actor.
func Session(id string) Actor { return Actor{"type": "session_actor", "session_id": id} }

// APIKey is an API actor.
func APIKey(id string) Actor { return Actor{"type": "api_actor", "api_key_id": id} }

// New starts a store on loopback, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{Store: "memstore_test01", clock: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), memories: map[string]*memory{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Fail makes the next requests answer these statuses (a 429 with retry-after 0).
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, statuses...)
}

// RaceNextWrite makes an agent write content at path just before the next
// create, update or delete a client asks for: the client's precondition then
// meets a store that moved.
func (s *Server) RaceNextWrite(path, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.race = func() {
		for _, m := range s.memories {
			if m.path == path {
				s.update(m, path, content, Session("sesn_race"))
				return
			}
		}
		s.create(path, content, Session("sesn_race"))
	}
}

// Write creates or updates the memory at path as actor, as an agent would.
func (s *Server) Write(path, content string, actor Actor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.memories {
		if m.path == path {
			s.update(m, path, content, actor)
			return
		}
	}
	s.create(path, content, actor)
}

// Move renames the memory at from to to, as actor.
func (s *Server) Move(from, to string, actor Actor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.memories {
		if m.path == from {
			s.update(m, to, m.content, actor)
			return
		}
	}
	panic("no memory at " + from)
}

// Delete deletes the memory at path as actor.
func (s *Server) Delete(path string, actor Actor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.memories {
		if m.path == path {
			s.remove(m, actor)
			return
		}
	}
	panic("no memory at " + path)
}

// Redact redacts the newest version of the memory at path.
func (s *Server) Redact(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.versions) - 1; i >= 0; i-- {
		if v := s.versions[i]; v.path == path {
			v.redacted = s.tick()
			return
		}
	}
	panic("no version at " + path)
}

// Files returns the store's memories, path to content.
func (s *Server) Files() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, m := range s.memories {
		out[m.path] = m.content
	}
	return out
}

// Versions counts the versions the store recorded.
func (s *Server) Versions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.versions)
}

func (s *Server) tick() time.Time {
	step := s.Step
	if step == 0 {
		step = time.Millisecond
	}
	s.clock = s.clock.Add(step)
	return s.clock
}

func (s *Server) id(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s_%06d", prefix, s.nextID)
}

func (s *Server) record(m *memory, op, path, content string, actor Actor) {
	v := &version{id: s.id("memver"), memory: m.id, op: op, path: path, content: content, actor: actor, at: s.tick()}
	s.versions = append(s.versions, v)
	m.version, m.updated = v.id, v.at
}

func (s *Server) create(path, content string, actor Actor) *memory {
	m := &memory{id: s.id("mem"), path: path, content: content}
	m.created = s.clock
	s.memories[m.id] = m
	s.record(m, "created", path, content, actor)
	return m
}

func (s *Server) update(m *memory, path, content string, actor Actor) {
	m.path, m.content = path, content
	s.record(m, "modified", path, content, actor)
}

func (s *Server) remove(m *memory, actor Actor) {
	delete(s.memories, m.id)
	s.record(m, "deleted", m.path, "", actor)
}

func sha(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests++
	if len(s.faults) > 0 {
		status := s.faults[0]
		s.faults = s.faults[1:]
		w.Header().Set("retry-after", "0")
		fail(w, status, "injected")
		return
	}
	if !strings.Contains(r.Header.Get("anthropic-beta"), "agent-memory-2026-07-22") {
		fail(w, http.StatusBadRequest, "missing beta header")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/memory_stores/"+s.Store+"/")
	if !ok {
		fail(w, http.StatusNotFound, "no such store")
		return
	}
	parts := strings.Split(rest, "/")
	if r.Method != http.MethodGet && s.race != nil {
		race := s.race
		s.race = nil
		race()
	}
	switch {
	case r.Method == http.MethodGet && rest == "memory_versions":
		s.listVersions(w, r)
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "memory_versions":
		s.getVersion(w, r, parts[1])
	case r.Method == http.MethodGet && rest == "memories":
		s.listMemories(w, r)
	case r.Method == http.MethodPost && rest == "memories":
		var p anthropic.BetaMemoryStoreMemoryNewParams
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		for _, m := range s.memories {
			if m.path == p.Path {
				fail(w, http.StatusConflict, "a memory exists at "+p.Path)
				return
			}
		}
		reply(w, s.memoryJSON(s.create(p.Path, p.Content.Value, APIKey("apikey_memvault")), false))
	case len(parts) == 2 && parts[0] == "memories":
		m := s.memories[parts[1]]
		if m == nil {
			fail(w, http.StatusNotFound, "no memory "+parts[1])
			return
		}
		s.oneMemory(w, r, m)
	default:
		fail(w, http.StatusNotFound, r.Method+" "+r.URL.Path)
	}
}

func (s *Server) oneMemory(w http.ResponseWriter, r *http.Request, m *memory) {
	switch r.Method {
	case http.MethodGet:
		reply(w, s.memoryJSON(m, r.URL.Query().Get("view") != "basic"))
	case http.MethodPost:
		var p anthropic.BetaMemoryStoreMemoryUpdateParams
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		if want := p.Precondition.ContentSha256; want.Valid() && want.Value != sha(m.content) {
			fail(w, http.StatusConflict, "content_sha256 precondition failed")
			return
		}
		path, content := m.path, m.content
		if p.Path.Valid() {
			path = p.Path.Value
		}
		if p.Content.Valid() {
			content = p.Content.Value
		}
		s.update(m, path, content, APIKey("apikey_memvault"))
		reply(w, s.memoryJSON(m, false))
	case http.MethodDelete:
		if want := r.URL.Query().Get("expected_content_sha256"); want != "" && want != sha(m.content) {
			fail(w, http.StatusConflict, "content_sha256 precondition failed")
			return
		}
		s.remove(m, APIKey("apikey_memvault"))
		reply(w, map[string]any{"id": m.id, "type": "memory_deleted"})
	default:
		fail(w, http.StatusMethodNotAllowed, r.Method)
	}
}

// page cuts items at the cursor: the page token is the offset.
func page[T any](r *http.Request, items []T, max int) ([]T, any) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > max {
		limit = max
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if off > len(items) {
		off = len(items)
	}
	end := min(off+limit, len(items))
	var next any
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[off:end], next
}

// listVersions answers newest first, as a client must not assume otherwise.
func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	full := q.Get("view") == "full"
	var since time.Time
	if g := q.Get("created_at[gte]"); g != "" {
		var err error
		if since, err = time.Parse(time.RFC3339Nano, g); err != nil {
			fail(w, http.StatusBadRequest, "created_at[gte]: "+err.Error())
			return
		}
	}
	until := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if l := q.Get("created_at[lte]"); l != "" {
		var err error
		if until, err = time.Parse(time.RFC3339Nano, l); err != nil {
			fail(w, http.StatusBadRequest, "created_at[lte]: "+err.Error())
			return
		}
	}
	var vs []*version
	for i := len(s.versions) - 1; i >= 0; i-- {
		if v := s.versions[i]; !v.at.Before(since) && !v.at.After(until) {
			vs = append(vs, v)
		}
	}
	most := 100
	if full {
		most = 20
		s.Widest = max(s.Widest, len(vs))
	}
	got, next := page(r, vs, most)
	data := []map[string]any{}
	for _, v := range got {
		data = append(data, s.versionJSON(v, full))
	}
	reply(w, map[string]any{"data": data, "next_page": next})
}

// getVersion answers a read of one version, with its content unless the
// basic view is asked for.
func (s *Server) getVersion(w http.ResponseWriter, r *http.Request, id string) {
	for _, v := range s.versions {
		if v.id == id {
			reply(w, s.versionJSON(v, r.URL.Query().Get("view") != "basic"))
			return
		}
	}
	fail(w, http.StatusNotFound, "no such version")
}

func (s *Server) versionJSON(v *version, full bool) map[string]any {
	out := map[string]any{"id": v.id, "type": "memory_version", "created_at": v.at.Format(time.RFC3339Nano),
		"memory_id": v.memory, "memory_store_id": s.Store, "operation": v.op, "created_by": v.actor,
		"path": v.path, "content": nil, "content_sha256": nil, "content_size_bytes": nil, "redacted_at": nil}
	if v.op != "deleted" {
		out["content_sha256"], out["content_size_bytes"] = sha(v.content), len(v.content)
		if full && v.redacted.IsZero() {
			out["content"] = v.content
			s.Contents++
		}
	}
	if !v.redacted.IsZero() {
		out["redacted_at"] = v.redacted.Format(time.RFC3339Nano)
		out["redacted_by"] = APIKey("apikey_admin")
		out["path"], out["content"], out["content_sha256"], out["content_size_bytes"] = nil, nil, nil, nil
	}
	return out
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) {
	var ms []*memory
	for _, m := range s.memories {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].path < ms[j].path })
	got, next := page(r, ms, 100)
	data := []map[string]any{}
	for _, m := range got {
		data = append(data, s.memoryJSON(m, r.URL.Query().Get("view") == "full"))
	}
	reply(w, map[string]any{"data": data, "next_page": next})
}

func (s *Server) memoryJSON(m *memory, full bool) map[string]any {
	out := map[string]any{"id": m.id, "type": "memory", "path": m.path, "memory_store_id": s.Store,
		"memory_version_id": m.version, "content_sha256": sha(m.content), "content_size_bytes": len(m.content),
		"created_at": m.created.Format(time.RFC3339Nano), "updated_at": m.updated.Format(time.RFC3339Nano), "content": nil}
	if full {
		out["content"] = m.content
	}
	return out
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("content-type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "error", "message": msg}})
}
