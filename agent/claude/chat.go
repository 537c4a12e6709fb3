package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memvault/memvault/agent"
)

// Chat defaults, used where ChatOptions leave a field zero.
const (
	DefaultModel     = anthropic.ModelClaudeSonnet4_6
	DefaultMaxTokens = 8192
	// DefaultMaxSteps bounds the requests of one turn: a model that keeps
	// calling tools is stopped there.
	DefaultMaxSteps = 50
)

// ChatOptions configure a Chat.
type ChatOptions struct {
	Model     anthropic.Model // "" means DefaultModel
	MaxTokens int64           // 0 means DefaultMaxTokens
	MaxSteps  int             // 0 means DefaultMaxSteps
	System    string          // an optional system prompt
	// ContextEdits leave edits out of BetaContextManagement, which asks for
	// context editing and compaction by default.
	ContextEdits ContextEdits
	// OnToolCall, if set, is called after each tool call has run, in order.
	OnToolCall func(ToolCall)
	// OnContextEdit, if set, is called for each change a response says the
	// API made to the context, so a person can see a session compacted.
	OnContextEdit func(ContextEdit)
}

// ContextEdit is a change the API made to the context of a request, for a transcript.
type ContextEdit struct {
	// Type is "compaction" for a summary of the conversation, else the type of
	// the edit applied, such as "clear_tool_uses_20250919".
	Type               string
	ClearedToolUses    int64 // the tool uses a clearing removed
	ClearedInputTokens int64 // the input tokens a clearing removed
}

// ToolCall is one tool call of the model and its answer, for a transcript.
type ToolCall struct {
	ID     string
	Name   string
	Input  json.RawMessage
	Answer agent.Answer
}

// Chat is a conversation with Claude in which the model has the memory tool on
// an agent.Handler's vault. It is not safe for concurrent use.
type Chat struct {
	client   anthropic.Client
	h        *agent.Handler
	opts     ChatOptions
	messages []anthropic.BetaMessageParam
}

// NewChat starts a conversation through client (its API key, base URL and
// retries are the client's) with the memory tool on h.
func NewChat(client anthropic.Client, h *agent.Handler, opts ChatOptions) *Chat {
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	if opts.MaxTokens == 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	return &Chat{client: client, h: h, opts: opts}
}

// ErrCutOff reports a response that ended at the max-tokens limit in the middle
// of a tool call; the call is not run.
var ErrCutOff = errors.New("the response reached the max tokens limit inside a tool call, which was not run; raise the limit")

// ErrTooManySteps reports a turn stopped after ChatOptions.MaxSteps requests.
var ErrTooManySteps = errors.New("the model kept calling tools; the turn was stopped")

// Send sends prompt as the user's next message and runs the turn: it calls the
// Messages API, runs the memory tool calls of each response one after another,
// in order, sends their results back, and so on until the model ends its turn.
// A turn the API paused (after compacting the conversation, or a long server
// step) is sent back as it is, which continues it. It returns the text of the
// final response.
//
// Every response goes into the conversation as it came, compaction blocks
// included: the API needs them back to know what they summarize, and it drops
// the messages before them itself.
//
// An API failure, after the client's retries, is an *APIError. On any error
// the conversation stays valid for the next Send: a request that never got an
// answer takes the prompt back, and tool calls are kept only with their
// results. Each tool call that ran is a whole commit; none is half-done.
func (c *Chat) Send(ctx context.Context, prompt string) (string, error) {
	start := len(c.messages)
	c.messages = append(c.messages, anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(prompt)))
	for step := 0; step < c.opts.MaxSteps; step++ {
		msg, err := c.client.Beta.Messages.New(ctx, c.params())
		if err != nil {
			if len(c.messages) == start+1 {
				c.messages = c.messages[:start]
			}
			return "", apiError(err)
		}
		c.reportEdits(msg)
		uses := toolUses(msg)
		switch {
		case len(uses) > 0 && msg.StopReason == anthropic.BetaStopReasonMaxTokens:
			return text(msg), ErrCutOff
		case paused(msg.StopReason):
			c.messages = append(c.messages, msg.ToParam())
			continue
		case len(uses) == 0 || msg.StopReason != anthropic.BetaStopReasonToolUse:
			c.messages = append(c.messages, msg.ToParam())
			return text(msg), nil
		}
		results, err := c.runTools(ctx, uses)
		if err != nil {
			return "", err
		}
		c.messages = append(c.messages, msg.ToParam(), anthropic.NewBetaUserMessage(results...))
	}
	return "", ErrTooManySteps
}

// params is the request for the conversation so far.
func (c *Chat) params() anthropic.BetaMessageNewParams {
	p := anthropic.BetaMessageNewParams{
		Model:     c.opts.Model,
		MaxTokens: c.opts.MaxTokens,
		Messages:  c.messages,
		Tools:     []anthropic.BetaToolUnionParam{BetaMemoryTool()},
	}
	p.ContextManagement, p.Betas = BetaContextManagement(c.opts.ContextEdits)
	if c.opts.System != "" {
		p.System = []anthropic.BetaTextBlockParam{{Text: c.opts.System}}
	}
	return p
}

// paused tells whether a response with this stop reason left its turn
// unfinished for the client to continue: after a compaction when the request
// asked for pause_after_compaction, or a server tool's long step. A turn that
// ended there instead would end without the model's answer.
func paused(r anthropic.BetaStopReason) bool {
	return r == anthropic.BetaStopReasonCompaction || r == anthropic.BetaStopReasonPauseTurn
}

// reportEdits hands OnContextEdit the clearings msg reports, then its
// compactions. A compaction block without a summary is a compaction that
// failed, which changed nothing.
func (c *Chat) reportEdits(msg *anthropic.BetaMessage) {
	if c.opts.OnContextEdit == nil {
		return
	}
	for _, e := range msg.ContextManagement.AppliedEdits {
		c.opts.OnContextEdit(ContextEdit{Type: e.Type, ClearedToolUses: e.ClearedToolUses, ClearedInputTokens: e.ClearedInputTokens})
	}
	for _, b := range msg.Content {
		if b.Type == "compaction" && b.AsCompaction().Content != "" {
			c.opts.OnContextEdit(ContextEdit{Type: "compaction"})
		}
	}
}

// runTools runs the tool calls of one response in order and returns their
// results. It stops at a failure outside the memory tool contract: the vault
// cannot be used, and the model cannot mend that.
func (c *Chat) runTools(ctx context.Context, uses []anthropic.BetaToolUseBlock) ([]anthropic.BetaContentBlockParamUnion, error) {
	results := make([]anthropic.BetaContentBlockParamUnion, 0, len(uses))
	for _, u := range uses {
		var r anthropic.BetaToolResultBlockParam
		var err error
		if u.Name == agent.ToolName {
			r, err = ToolResult(ctx, c.h, u)
		} else { // not ours: the request declares no other tool
			r = anthropic.NewBetaToolResultTextBlockParam(u.ID, "Error: Unknown tool: "+u.Name, true)
		}
		if err != nil {
			return nil, fmt.Errorf("agent: chat: %w", err)
		}
		if c.opts.OnToolCall != nil {
			c.opts.OnToolCall(ToolCall{ID: u.ID, Name: u.Name, Input: toolInput(u), Answer: answerOf(r)})
		}
		results = append(results, anthropic.BetaContentBlockParamUnion{OfToolResult: &r})
	}
	return results, nil
}

func answerOf(r anthropic.BetaToolResultBlockParam) agent.Answer {
	a := agent.Answer{IsError: r.IsError.Value}
	if len(r.Content) == 1 && r.Content[0].OfText != nil {
		a.Content = r.Content[0].OfText.Text
	}
	return a
}

// toolUses are the tool_use blocks of msg, in order.
func toolUses(msg *anthropic.BetaMessage) []anthropic.BetaToolUseBlock {
	var uses []anthropic.BetaToolUseBlock
	for _, b := range msg.Content {
		if b.Type == "tool_use" {
			uses = append(uses, b.AsToolUse())
		}
	}
	return uses
}

// text joins the text blocks of msg.
func text(msg *anthropic.BetaMessage) string {
	var parts []string
	for _, b := range msg.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
