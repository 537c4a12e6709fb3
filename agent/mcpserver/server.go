// Package mcpserver is memvault's MCP server: the memory tool of package agent
// as the MCP tool "memory", beside the read-only tools "history", "search" and
// "blame", and every memory file as a resource memory:///memories/... with
// change notifications. New builds a server on a vault (NewUnavailable one
// that explains why there is none); ServeStdio runs it on a process's stdin
// and stdout, Listen, Handler and ServeHTTP over streamable HTTP on loopback.
//
// It lives apart from package agent so that agent alone does not build the
// MCP SDK in.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/vault"
)

// Store is what the MCP server needs from a vault: what the memory tool reads
// and writes (agent.VaultStore) and the history of commits. *vault.Vault
// implements it.
type Store interface {
	agent.VaultStore
	Log(ctx context.Context, opts vault.LogOptions) ([]vault.Record, error)
}

// Options configure New.
type Options struct {
	// Version is the server version reported to clients; "" means "dev".
	Version string
	// Poll is how often the vault is checked for changes made elsewhere (another
	// process, a sync) while a client is connected, to send resource
	// notifications; 0 means DefaultPoll, a negative value never. Where the
	// store can watch the vault (vault.Vault.Watch, on Linux), a change made
	// elsewhere is announced at once and the poll is only the fallback; changes
	// made through the server itself are always announced at once.
	Poll time.Duration
	// Logger receives the MCP SDK's log; nil means none.
	Logger *slog.Logger
	// ReadOnly serves the memory tool read-only: marked so to clients
	// (readOnlyHint), and answering every command but view with
	// agent.ReadOnlyAnswer, changing nothing.
	ReadOnly bool
}

// DefaultPoll is how often an MCP server looks for changes made to the vault
// by others, unless Options.Poll says otherwise.
const DefaultPoll = 2 * time.Second

// MemoryProtocol is the protocol the Messages API teaches the model when the
// memory tool is enabled. An MCP client gets no such system prompt, so the MCP
// server puts it in the memory tool's description and its instructions.
const MemoryProtocol = `IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY (/memories) BEFORE DOING ANYTHING ELSE.

MEMORY PROTOCOL:
1. Start with the view command on /memories to pick up earlier progress, decisions and notes.
2. As you work, record status, progress and what you learn in memory files, as you go rather than at the end.
3. ASSUME INTERRUPTION: your context may be reset at any moment, and any progress not recorded in /memories is lost.`

// memoryToolDescription is the description of the MCP memory tool: the protocol,
// then the commands.
const memoryToolDescription = `Your persistent memory: a directory of text files under /memories that outlives this conversation (kept encrypted, every change a commit in a git history).

` + MemoryProtocol + `

Commands (the "command" field), each with its own fields:
- view {path, view_range?}: list a directory two levels deep, or show a file with line numbers; view_range [first, last] shows part of a file (last -1 for the end).
- create {path, file_text}: create a new file (parent directories come into being); fails if the path exists.
- str_replace {path, old_str, new_str}: replace old_str, which must occur exactly once, with new_str.
- insert {path, insert_line, insert_text}: insert text as a new line after line insert_line (0 for the top).
- delete {path}: delete a file, or a directory with everything in it.
- rename {old_path, new_path}: move a file or directory.
Every path starts with /memories. Keep your memory organised: update or delete files that are out of date rather than piling up new ones.`

// memoryInputSchema is the memory tool's command object. It is flat (no oneOf),
// since the Messages API refuses a tool schema with oneOf at the top, and it
// lets through fields a command does not use, as the contract ignores them.
const memoryInputSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "delete", "rename"], "description": "The memory command to run."},
    "path": {"type": "string", "description": "view, create, str_replace, insert, delete: the path, /memories or under it."},
    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "view of a file: [first line, last line], 1-based and inclusive; -1 as last means the end."},
    "file_text": {"type": "string", "description": "create: the content of the new file."},
    "old_str": {"type": "string", "description": "str_replace: the text to replace; it must occur exactly once."},
    "new_str": {"type": "string", "description": "str_replace: the replacement; missing means the empty string."},
    "insert_line": {"type": "integer", "minimum": 0, "description": "insert: the line after which the text goes; 0 for the top."},
    "insert_text": {"type": "string", "description": "insert: the text to insert; one trailing newline is dropped."},
    "old_path": {"type": "string", "description": "rename: the file or directory to move."},
    "new_path": {"type": "string", "description": "rename: where it goes."}
  },
  "required": ["command"]
}`

// memoryTool is the MCP memory tool: the memory tool's command object in, its
// answer out; read-only, it says so to the client and to the model.
func memoryTool(readOnly bool) *mcp.Tool {
	t := &mcp.Tool{
		Name:        "memory",
		Title:       "Memory",
		Description: memoryToolDescription,
		InputSchema: json.RawMessage(memoryInputSchema),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}
	if readOnly {
		t.Description = readOnlyNote + t.Description
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	}
	return t
}

// readOnlyNote heads the description of a read-only memory tool.
const readOnlyNote = "READ-ONLY HERE: recall what is in /memories with view; every other command answers an error and changes nothing.\n\n"

// toolUseIDKeys are the _meta keys of a tools/call request that may carry the
// model's tool_use id, so a commit made through MCP can still name it: ours, and
// the one Claude Code sends when it does.
var toolUseIDKeys = []string{"memvault/toolUseId", "claudecode/toolUseId"}

// New returns an MCP server exposing store: the tool "memory", whose
// input is the memory tool's command object and whose answers are those of a
// agent.Handler (is_error as isError); the tool "history", recent commits; the tools
// "search" and "blame" when store is a ProvenanceStore; and every
// memory file as a read-only resource memory:///memories/..., with list-changed
// and, for subscribers, updated notifications when the vault changes.
//
// Each client session gets its own session id; its commits carry it and the
// client's name (from initialize) in their Session and Agent trailers.
// Serve it on stdio with ServeStdio, over streamable HTTP with ServeHTTP
// (or Handler in a server of your own), or on any transport with its Run method.
// Close it before closing store: it polls store in the background.
func New(store Store, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Poll == 0 {
		opts.Poll = DefaultPoll
	}
	m := &mcpServer{store: store, opts: opts, sessions: make(map[*mcp.ServerSession]string),
		subs: make(map[*mcp.ServerSession]map[string]bool)}
	m.life, m.end = context.WithCancel(context.Background())
	m.srv = mcp.NewServer(&mcp.Implementation{Name: "memvault", Title: "memvault", Version: opts.Version}, &mcp.ServerOptions{
		Instructions:       "memvault is your persistent memory, through the memory tool.\n\n" + MemoryProtocol,
		Logger:             opts.Logger,
		SetCacheable:       privateCache,
		InitializedHandler: m.initialized,
		SubscribeHandler:   m.subscribe,
		UnsubscribeHandler: m.unsubscribe,
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
	m.res = newResourceSync(store, m.srv)
	m.srv.AddTool(memoryTool(opts.ReadOnly), m.callMemory)
	m.srv.AddTool(historyTool(), m.callHistory)
	m.addProvenanceTools()
	// Lists and reads see the vault as it is now, whatever the last poll saw.
	m.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !m.begin() {
				return nil, errClosed
			}
			defer m.served.Done()
			m.watch()
			if method == "resources/list" || method == "resources/read" {
				m.res.refresh(ctx) // on failure the read itself reports
			}
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && err == nil {
				m.res.sizes(lr)
			}
			return res, err
		}
	})
	return &Server{Server: m.srv, m: m}
}

// Server is an MCP server over a store, as New makes it: an *mcp.Server, and
// the polling of the store for changes made elsewhere, which Close ends.
type Server struct {
	*mcp.Server
	m *mcpServer
}

// Close stops the polling of the store, for good, refuses every request from
// then on, and waits for a refresh in progress and for the requests being
// served: after it, nothing the server does touches the store, which can then
// be closed. (An HTTP server may still be running a handler when ServeHTTP
// returns: a notification is answered before it is handled, and a request
// that outlives the shutdown's grace is cut off without being waited for.)
// Close is idempotent.
func (s *Server) Close() {
	m := s.m
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.end()
	m.pollers.Wait()
	m.served.Wait()
}

// errClosed answers a request that arrives once Close has begun.
var errClosed = errors.New("memvault: the MCP server is shutting down")

// begin counts a request in, unless Close has begun.
func (m *mcpServer) begin() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.served.Add(1)
	return true
}

// mcpServer is the state behind one MCP server.
type mcpServer struct {
	store Store
	opts  Options
	srv   *mcp.Server
	res   *resourceSync

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]string // session ids, while connected
	polling  bool
	closed   bool // by Close: no more polling, no more requests

	life    context.Context // the polling's, ended by Close
	end     context.CancelFunc
	pollers sync.WaitGroup // the poll goroutine, while it runs
	served  sync.WaitGroup // requests being handled (see begin)

	subMu sync.Mutex // not mu: a subscription may wait for a refresh, tool calls must not
	subs  map[*mcp.ServerSession]map[string]bool
	nsubs int // subscriptions in subs
}

// callMemory runs one memory command for the calling session.
func (m *mcpServer) callMemory(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	agentName := ""
	if ci := req.ClientInfo(); ci != nil {
		agentName = clientName(ci.Name)
	}
	h := agent.New(agent.Vault(m.store), agent.Options{Agent: agentName, Session: m.callSession(req), ReadOnly: m.opts.ReadOnly})
	input := []byte(req.Params.Arguments)
	a, err := h.Run(ctx, input, toolUseID(req.Params.Meta))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a = agent.Answer{Content: contract.InternalAnswer(err), IsError: true}
	}
	if !a.IsError {
		m.res.refresh(ctx) // announce a change at once; a view finds none
	}
	return textResult(a.Content, a.IsError), nil
}

// clientName makes a client's self-chosen name fit for a commit: no angle
// brackets or control characters, which would break (or forge) the commit's
// author line, and not overlong.
func clientName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '<' || r == '>' {
			return -1
		}
		return r
	}, s)
	if r := []rune(strings.TrimSpace(s)); len(r) > 100 {
		return string(r[:100])
	}
	return strings.TrimSpace(s)
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

// toolUseID finds the model's tool_use id in a request's _meta, if the client sent one.
func toolUseID(meta mcp.Meta) string {
	for _, k := range toolUseIDKeys {
		if s, ok := meta[k].(string); ok {
			return s
		}
	}
	return ""
}

// callSession is the session a tool call belongs to: the one the HTTP front
// found for a client of a revision without sessions, else its MCP session's.
func (m *mcpServer) callSession(req *mcp.CallToolRequest) string {
	if req.Extra != nil {
		if id := req.Extra.Header.Get(sessionHeader); id != "" {
			return id
		}
	}
	return m.sessionID(req.Session)
}

// newSessionID makes a session id of memvault's own.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "mcp-" + hex.EncodeToString(b[:])
}

// sessionID returns the id memvault gave ss, giving it one on first use. It is
// memvault's own random id, never the transport's Mcp-Session-Id, which a
// client uses as a credential and which must not land in a synced history.
func (m *mcpServer) sessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.sessions[ss]; ok {
		return id
	}
	id := newSessionID()
	m.sessions[ss] = id
	go func() {
		_ = ss.Wait()
		m.mu.Lock()
		delete(m.sessions, ss)
		m.mu.Unlock()
	}()
	return id
}

// initialized gives a session that began with initialize its id and starts
// watching the vault. (Clients of the 2026-07-28 protocol send no initialize;
// their first request starts the watch.)
func (m *mcpServer) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	m.sessionID(req.Session)
	m.res.refresh(ctx)
	m.watch()
}

// watch makes sure the vault is being polled for changes made by others.
func (m *mcpServer) watch() {
	if m.opts.Poll < 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.polling && !m.closed {
		m.polling = true
		m.pollers.Go(m.poll)
	}
}

// watcher is what a store offers when it can tell at once of changes made
// elsewhere; *vault.Vault does (see vault.Vault.Watch).
type watcher interface {
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// poll refreshes the resources as soon as the store says the vault changed,
// and every opts.Poll in case it cannot tell, while any session is connected.
func (m *mcpServer) poll() {
	ctx, cancel := context.WithCancel(m.life)
	defer cancel()
	var changed <-chan struct{} // nil, never ready, when the store cannot watch
	if w, ok := m.store.(watcher); ok {
		if ch, err := w.Watch(ctx); err == nil {
			changed = ch
			m.refresh() // a change before the watch began
		}
	}
	t := time.NewTicker(m.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return // closed; polling stays off
		case <-t.C:
		case _, ok := <-changed:
			if !ok {
				changed = nil
				continue
			}
		}
		m.mu.Lock()
		if !hasSessions(m.srv) {
			m.polling = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		m.refresh()
	}
}

// refresh brings the resources up to the vault, bounded in time.
func (m *mcpServer) refresh() {
	ctx, cancel := context.WithTimeout(m.life, m.opts.Poll+10*time.Second)
	defer cancel()
	m.res.refresh(ctx)
}

func hasSessions(srv *mcp.Server) bool {
	for range srv.Sessions() {
		return true
	}
	return false
}

// Bounds on what clients hold in the server: every change is compared
// against each subscribed file, so subscriptions a client made and left
// behind once slowed every later write by seconds, for good.
const (
	maxSessionSubscriptions = 1000  // subscriptions of one session
	maxSubscriptions        = 10000 // subscriptions of all sessions together
)

var errTooManySubscriptions = errors.New("too many subscriptions")

// subscribe records a session's subscription, within the bounds, until it
// unsubscribes or the session ends.
func (m *mcpServer) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if _, ok := memoryPathOf(uri); !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	m.subMu.Lock()
	defer m.subMu.Unlock()
	subs := m.subs[req.Session]
	if subs[uri] {
		return nil
	}
	if len(subs) >= maxSessionSubscriptions {
		return fmt.Errorf("memvault: subscribe %s: %w: at most %d a session; unsubscribe from some first",
			uri, errTooManySubscriptions, maxSessionSubscriptions)
	}
	if m.nsubs >= maxSubscriptions {
		return fmt.Errorf("memvault: subscribe %s: %w: the server holds its limit of %d; try again later",
			uri, errTooManySubscriptions, maxSubscriptions)
	}
	if subs == nil {
		subs = map[string]bool{}
		m.subs[req.Session] = subs
		if ss := req.Session; ss != nil {
			go func() { // an ended or idle-closed session leaves nothing behind
				_ = ss.Wait()
				m.dropSubscriptions(ss)
			}()
		}
	}
	subs[uri] = true
	m.nsubs++
	m.res.watch(uri, 1)
	return nil
}

// unsubscribe ends a subscription the session holds; one it does not hold
// is no one else's to end.
func (m *mcpServer) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	if subs := m.subs[req.Session]; subs[req.Params.URI] {
		delete(subs, req.Params.URI)
		m.nsubs--
		m.res.watch(req.Params.URI, -1)
	}
	return nil
}

// dropSubscriptions ends every subscription of session ss.
func (m *mcpServer) dropSubscriptions(ss *mcp.ServerSession) {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	for uri := range m.subs[ss] {
		m.nsubs--
		m.res.watch(uri, -1)
	}
	delete(m.subs, ss)
}

// privateCache marks every list and read for the asking client alone: the
// SDK would call them public, fit for a cache shared between users, and a
// memory is nobody else's.
func privateCache(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = "private"
}

func ptr[T any](v T) *T { return &v }
