// Package agent is the memory tool: it takes the input of one memory_20250818
// tool call (a JSON command object such as {"command":"view","path":"/memories"}),
// checks it, runs it on a vault and renders the tool_result the model sees,
// byte for byte as the contract in docs/memory-tool.md says.
//
// A Handler runs single calls, for a Go agent loop or the memvault tool command;
// Serve answers a stream of JSON-lines requests for bridges that keep one process.
// A view reads one state of the memory; every other command runs inside one
// Store.Change (on a vault, one Update), so concurrent calls, from goroutines
// or processes, are serialised and each successful one is exactly one commit.
//
// The tool's other faces live in their own packages, so a program that only
// runs memory tool calls builds in neither SDK: agent/mcpserver is the MCP
// server (the memory, history, search and blame tools and the memory files
// as resources), agent/claude is the Claude agent loop on anthropic-sdk-go
// (Chat, ToolResult, the tool declaration). agent/bridges holds the Python
// and TypeScript bridges that speak to Serve.
package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/vault"
)

// ToolName is the name of the memory tool in the model's tool_use blocks.
const ToolName = "memory"

// Options configure a Handler.
type Options struct {
	// Agent and Session name who makes the changes; they go into each commit's
	// trailers when set.
	Agent, Session string
	// MaxLine is the longest request line Serve accepts, in bytes;
	// 0 means the store's Limits().MaxRequestLine, or DefaultMaxLine.
	MaxLine int
	// ReadOnly answers every command but view with ReadOnlyAnswer, once
	// its input passed the contract's checks, and changes nothing.
	ReadOnly bool
}

// Handler runs memory tool calls on a Store. Its methods are safe for concurrent use.
type Handler struct {
	store Store
	opts  Options
	// mu serialises this Handler's mutations, so its goroutines queue here
	// rather than contend for the vault's cross-process lock.
	mu sync.Mutex
}

// New returns a Handler that runs tool calls on store.
func New(store Store, opts Options) *Handler {
	return &Handler{store: store, opts: opts}
}

// Answer is the tool_result of one call: its text content and is_error flag.
type Answer struct {
	Content string
	IsError bool
}

// Run executes one tool input, the JSON object of a tool_use's input field, with
// toolUseID recorded in the commit it makes.
//
// Every failure the contract names (invalid input, a bad path, a missing file, …)
// is an Answer with IsError set and a nil error. Run returns a non-nil error only
// for a failure outside the contract: the vault could not be read or written, no
// identity could decrypt a file (wrapping vault.ErrDecrypt or vault.ErrNoIdentity),
// or ctx ended. Then nothing was changed.
func (h *Handler) Run(ctx context.Context, input []byte, toolUseID string) (Answer, error) {
	c, f := parse(input)
	if f != nil {
		return f.answer(), nil
	}
	var content string
	var err error
	switch {
	case c.name == "view":
		content, err = h.view(ctx, c)
	case h.opts.ReadOnly:
		return Answer{Content: ReadOnlyAnswer(c.name), IsError: true}, nil
	default:
		content, err = h.mutate(ctx, c, toolUseID)
	}
	if errors.As(err, &f) {
		return f.answer(), nil
	}
	var held *vault.HeldError
	if errors.As(err, &held) {
		return Answer{Content: HeldAnswer(held), IsError: true}, nil
	}
	var bad *vault.EntryError
	if errors.As(err, &bad) {
		// The vault's tree holds what memvault never wrote: the file is at
		// fault, not the identity, and the model may go on with the rest.
		return fail("%s is not a memory file memvault can read: %s", bad.Path, bad.Reason).answer(), nil
	}
	if err != nil {
		return Answer{}, &contract.InternalError{Command: c.name, Err: err}
	}
	return Answer{Content: content}, nil
}

// Handle is Run for a Go agent loop, which has no other way to report a failure
// to the model: a failure outside the contract becomes an answer
// "Error: memvault: {command} failed: {what}", where {what} is a short fixed
// description (no paths on the disk, no key material, no plaintext). Use Run to
// see the error itself.
func (h *Handler) Handle(ctx context.Context, input []byte, toolUseID string) (content string, isError bool) {
	a, err := h.Run(ctx, input, toolUseID)
	if err != nil {
		return contract.InternalAnswer(err), true
	}
	return a.Content, a.IsError
}

// mutate runs a mutating command inside one Change, so its checks and its write
// see the same state and no other writer comes between them.
func (h *Handler) mutate(ctx context.Context, c command, toolUseID string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	meta := vault.Meta{Command: c.name, ToolUseID: toolUseID, Agent: h.opts.Agent, Session: h.opts.Session}
	limits := h.store.Limits()
	c, note, err := checkSecrets(c, limits)
	if err != nil {
		return "", err
	}
	var content string
	err = h.store.Change(ctx, meta, func(e Edit) error {
		var err error
		content, err = edit(ctx, e, c)
		return err
	})
	return content + note, err
}

// failure is a failure the contract names. It travels as an error through
// Store.Change, which returns it unchanged.
type failure struct{ msg string }

func fail(format string, args ...any) *failure {
	return &failure{msg: fmt.Sprintf(format, args...)}
}

func (f *failure) Error() string { return "agent: " + f.msg }

func (f *failure) answer() Answer { return Answer{Content: "Error: " + f.msg, IsError: true} }

// ReadOnlyAnswer is the answer of a read-only face to command, any but view.
func ReadOnlyAnswer(command string) string {
	return "Error: The memory is read-only here: " + command + " was not run, and nothing changed. Only view works."
}

// HeldAnswer is the answer to a command the guard against mass deletion
// held (see vault.AgentStore): what happened, and how a person approves it.
func HeldAnswer(e *vault.HeldError) string {
	how := "it waits for a person's approval (memvault review approve " + shortID(e.ID) + ")"
	if e.ID == "" {
		how = "a change held before waits for a person's approval already (memvault review)"
	}
	return fmt.Sprintf("Error: This change would take the memory files this session deleted or emptied to %d of %d, "+
		"over the limit of %s, so it was not made: %s. Until then the memory stays as it was.", e.Files, e.Of, e.Limit, how)
}

// shortID is the first 12 hex digits of a change's ID, as memvault review
// shows it.
func shortID(id string) string { return id[:min(12, len(id))] }
