package claude_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/claude"
	"github.com/memvault/memvault/vault"
)

// A Go program that runs its own loop with anthropic-sdk-go declares the memory
// tool and its beta, and answers each memory tool_use with ToolResult.
func ExampleToolResult() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	h := agent.New(agent.Vault(v), agent.Options{Agent: "my-agent"})

	// Context editing and compaction, and the beta headers they need.
	cm, betas := claude.BetaContextManagement(claude.ContextEdits{})
	params := anthropic.BetaMessageNewParams{
		Model:             anthropic.ModelClaudeSonnet4_6,
		MaxTokens:         4096,
		Tools:             []anthropic.BetaToolUnionParam{claude.BetaMemoryTool()},
		Betas:             betas,
		ContextManagement: cm,
		Messages: []anthropic.BetaMessageParam{
			anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("I prefer tea.")),
		},
	}
	// msg, err := client.Beta.Messages.New(ctx, params); here, a response as the API sends it:
	var msg anthropic.BetaMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","stop_reason":"tool_use","content":[
		{"type":"tool_use","id":"toolu_01","name":"memory",
		 "input":{"command":"create","path":"/memories/prefs.md","file_text":"Drinks tea.\n"}}]}`), &msg); err != nil {
		log.Fatal(err)
	}

	// Run the memory calls in order; each becomes one commit.
	var results []anthropic.BetaContentBlockParamUnion
	for _, block := range msg.Content {
		if use, ok := block.AsAny().(anthropic.BetaToolUseBlock); ok && use.Name == agent.ToolName {
			result, err := claude.ToolResult(ctx, h, use)
			if err != nil {
				log.Print(err) // the vault failed; result tells the model so
			}
			results = append(results, anthropic.BetaContentBlockParamUnion{OfToolResult: &result})
		}
	}
	// The response goes back as it came (a compaction block in it included),
	// then the results; call client.Beta.Messages.New(ctx, params) again. A
	// response that stopped for "compaction" or "pause_turn" has no calls to
	// answer: send it back alone to continue the turn.
	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewBetaUserMessage(results...))

	out, _ := json.Marshal(results)
	fmt.Println(string(out))
	recs, _ := v.Log(ctx, vault.LogOptions{Limit: 1})
	fmt.Println(recs[0].Subject, recs[0].ToolUseID, recs[0].Agent)
	// Output:
	// [{"tool_use_id":"toolu_01","content":[{"text":"File created successfully at: /memories/prefs.md","type":"text"}],"type":"tool_result"}]
	// create /memories/prefs.md toolu_01 my-agent
}
