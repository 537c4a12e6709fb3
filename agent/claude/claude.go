// Package claude runs the memory tool of package agent for Claude through
// anthropic-sdk-go's Messages API: BetaMemoryTool, Beta and
// BetaContextManagement declare it in a request, ToolResult answers one
// tool_use block, and Chat (NewChat, Send) runs a whole conversation whose
// tool calls are commits. memvault chat is built on it.
//
// It was part of package agent until issue 14, which moved it here so that
// agent alone does not build the Anthropic SDK in.
package claude

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memvault/memvault/agent"
)

// Beta is the beta header the memory tool (and context management) needs on
// every Messages request: put it in anthropic.BetaMessageNewParams.Betas.
const Beta = anthropic.AnthropicBetaContextManagement2025_06_27

// BetaMemoryTool is the declaration of the memory tool (type memory_20250818)
// for anthropic.BetaMessageNewParams.Tools. With it the API tells the model to
// view its memory first, record progress and assume interruption.
func BetaMemoryTool() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// BetaContextManagement is the context management memory tool sessions want
// (for anthropic.BetaMessageNewParams.ContextManagement): as the context
// fills, the API clears old tool results (clear_tool_uses_20250919), except
// the memory tool's, so a long session goes on and what the model saved stays
// reachable in its memory.
func BetaContextManagement() anthropic.BetaContextManagementConfigParam {
	return anthropic.BetaContextManagementConfigParam{
		Edits: []anthropic.BetaContextManagementConfigEditUnionParam{{
			OfClearToolUses20250919: &anthropic.BetaClearToolUses20250919EditParam{ExcludeTools: []string{agent.ToolName}},
		}},
	}
}

// ToolResult runs the memory command of block, a tool_use of the memory tool
// from the model's response, on h, and returns the tool_result block to send
// back in the next user message. The commit the command makes (if it changes
// anything) records block.ID as its Tool-Use-Id.
//
// The returned block is always the one to send. The error is non-nil only for
// a failure outside the memory tool contract (see agent.Handler.Run): then the
// block tells the model, as Handle does, that the command failed, and nothing changed.
// Run the tool calls of one response one after another, in their order: they
// are commits, and each must see what the one before did.
func ToolResult(ctx context.Context, h *agent.Handler, block anthropic.BetaToolUseBlock) (anthropic.BetaToolResultBlockParam, error) {
	a, err := h.Run(ctx, toolInput(block), block.ID)
	if err != nil {
		a = agent.Answer{Content: agent.InternalAnswer(err), IsError: true}
	}
	return anthropic.NewBetaToolResultTextBlockParam(block.ID, a.Content, a.IsError), err
}

// toolInput is the input of block as the API sent it, byte for byte when the
// block came from a response, so the contract sees exactly what the model wrote.
func toolInput(block anthropic.BetaToolUseBlock) []byte {
	if raw := block.JSON.Input.Raw(); raw != "" {
		return []byte(raw)
	}
	b, err := json.Marshal(block.Input)
	if err != nil {
		return nil // answered as invalid input
	}
	return b
}
