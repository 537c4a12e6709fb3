// Package claude runs the memory tool of package agent for Claude through
// anthropic-sdk-go's Messages API: BetaMemoryTool, Beta and
// BetaContextManagement declare it in a request, ToolResult answers one
// tool_use block, and Chat (NewChat, Send) runs a whole conversation whose
// tool calls are commits. memvault chat is built on it.
//
// It lives apart from package agent so that agent alone does not build the
// Anthropic SDK in.
package claude

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/internal/contract"
)

// Beta is the beta header the memory tool (and context editing) needs on
// every Messages request. BetaContextManagement returns it with the headers
// its edits need; put those in anthropic.BetaMessageNewParams.Betas.
const Beta = anthropic.AnthropicBetaContextManagement2025_06_27

// BetaCompaction is the beta header of the compaction edit (compact_20260112).
const BetaCompaction = anthropic.AnthropicBetaCompact2026_01_12

// CompactionTrigger is the size of the input, in tokens, at which the API
// compacts the conversation. It sits above the trigger of clearing (the API's
// default, 100,000), so old tool results, which the model is warned of and
// can save first, go before the conversation itself is summarized.
const CompactionTrigger = 150_000

// CompactionInstructions tell the API how to summarize the conversation of an
// agent whose facts, state and decisions are in its memory directory: the
// summary carries the thread of the work and points at memory rather than
// repeating it, and what was not yet saved is saved before the work goes on.
const CompactionInstructions = `Summarize the conversation so far so that the work can go on from the summary alone. ` +
	`This agent keeps its facts, state and decisions in its memory directory, /memories, through the memory tool: ` +
	`name the memory files the work depends on rather than copying them, since they can be viewed again. ` +
	`Keep what the user asked for, the task, the step reached and the next step. ` +
	`List anything learned or decided that is not yet saved in /memories, and end the summary by asking ` +
	`that it be saved there before the work goes on.`

// BetaMemoryTool is the declaration of the memory tool (type memory_20250818)
// for anthropic.BetaMessageNewParams.Tools. With it the API tells the model to
// view its memory first, record progress and assume interruption.
func BetaMemoryTool() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// ContextEdits choose the edits of BetaContextManagement. The zero value asks
// for both, as a memory tool agent wants.
type ContextEdits struct {
	// NoContextEditing leaves out clear_tool_uses_20250919: old tool results stay.
	NoContextEditing bool
	// NoCompaction leaves out compact_20260112: the conversation is never summarized.
	NoCompaction bool
	// PauseAfterCompaction has the API stop the turn right after it compacts
	// (stop reason "compaction"), so the client can act before the model goes
	// on; sending the conversation back as it stands continues the turn, as
	// Chat does.
	PauseAfterCompaction bool
}

// BetaContextManagement is the context management memory tool sessions want,
// for anthropic.BetaMessageNewParams.ContextManagement, and the beta headers
// the request then needs, for its Betas. Memory holds facts, state and
// decisions; the edits keep a long session going around it:
//
//   - context editing (clear_tool_uses_20250919): as the context fills, the
//     API clears old tool results, except the memory tool's, after the model
//     is warned and has saved what matters to /memories;
//   - compaction (compact_20260112): past CompactionTrigger input tokens the
//     API summarizes the conversation (CompactionInstructions) for continuity.
//     A response then holds a compaction block, which must go back in the
//     next request's assistant content (BetaMessage.ToParam keeps it).
//
// e leaves either edit out; the betas always hold Beta, which the memory tool needs.
func BetaContextManagement(e ContextEdits) (anthropic.BetaContextManagementConfigParam, []anthropic.AnthropicBeta) {
	var cm anthropic.BetaContextManagementConfigParam
	betas := []anthropic.AnthropicBeta{Beta}
	if !e.NoContextEditing {
		cm.Edits = append(cm.Edits, anthropic.BetaContextManagementConfigEditUnionParam{
			OfClearToolUses20250919: &anthropic.BetaClearToolUses20250919EditParam{ExcludeTools: []string{agent.ToolName}},
		})
	}
	if !e.NoCompaction {
		compact := &anthropic.BetaCompact20260112EditParam{
			Trigger:      anthropic.BetaInputTokensTriggerParam{Value: CompactionTrigger},
			Instructions: anthropic.String(CompactionInstructions),
		}
		if e.PauseAfterCompaction {
			compact.PauseAfterCompaction = anthropic.Bool(true)
		}
		cm.Edits = append(cm.Edits, anthropic.BetaContextManagementConfigEditUnionParam{OfCompact20260112: compact})
		betas = append(betas, BetaCompaction)
	}
	return cm, betas
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
		a = agent.Answer{Content: contract.InternalAnswer(err), IsError: true}
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
