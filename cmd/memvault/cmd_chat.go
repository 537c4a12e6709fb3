package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/claude"
	"github.com/memvault/memvault/vault/escape"
)

// chatOptions are the flags of `memvault chat`.
type chatOptions struct {
	prompt              string // -p; "" means the REPL, "-" reads stdin
	model               string
	maxTokens           int64
	system              string
	noContextManagement bool
	noContextEditing    bool
	noCompaction        bool
	apiKeyFile          string
	agent               string
	session             string
	quiet               bool
	face                faceFlags
}

func newChatCommand(g *globalOptions) *cobra.Command {
	var opts chatOptions
	c := &cobra.Command{
		Use:   "chat",
		Short: "Talk to Claude, with its memory tool on this vault",
		Long: `Chat talks to Claude through the Messages API with the memory tool (memory_20250818)
declared, and runs the model's memory commands on the vault: each is one commit whose
Tool-Use-Id is the call's tool_use id. The calls of one response run in order.

By default it is a conversation: type a prompt, read the answer; /exit or the end of
input stops. With -p PROMPT it runs one turn and prints the final text alone ("-p -"
reads the prompt from stdin). Memory commands, and the changes the API makes to the
context, are shown on stderr unless --quiet.

The API key comes from $ANTHROPIC_API_KEY (or --api-key-file); $ANTHROPIC_BASE_URL
points elsewhere than the public API. The model is --model, else $ANTHROPIC_MODEL, else
` + claude.DefaultModel + `.

A long session keeps going: memory holds the facts, state and decisions, and the API
keeps the context in bounds around them. Context editing (clear_tool_uses_20250919)
clears old tool results as the context fills, sparing the memory tool's; past
` + strconv.Itoa(claude.CompactionTrigger) + ` input tokens, compaction (compact_20260112) summarizes the conversation
for continuity, pointing at /memories for the rest and asking that what is not yet saved
there be saved. Turn either off with --no-context-editing or --no-compaction, both with
--no-context-management.

The client retries connection errors, rate limits (429) and overload (529) as the SDK
does; an error that remains is reported and the conversation can go on.

` + reviewHelp,
		Example: `  memvault chat
  memvault chat -p "What do you remember about this project?"
  echo "Summarise my notes" | memvault chat -p - --model claude-opus-4-5`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runChat(c.Context(), c, g, opts, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.StringVarP(&opts.prompt, "print", "p", "", "run one turn with `PROMPT` and print the final text (- reads stdin)")
	f.StringVar(&opts.model, "model", "", "the `MODEL` (default $ANTHROPIC_MODEL, else "+claude.DefaultModel+")")
	f.Int64Var(&opts.maxTokens, "max-tokens", claude.DefaultMaxTokens, "the most tokens in one response")
	f.StringVar(&opts.system, "system", "", "a system prompt `TEXT`")
	f.BoolVar(&opts.noContextEditing, "no-context-editing", false, "do not clear old tool results as the context fills")
	f.BoolVar(&opts.noCompaction, "no-compaction", false, "do not summarize the conversation as the context fills")
	f.BoolVar(&opts.noContextManagement, "no-context-management", false, "neither clear old tool results nor summarize the conversation")
	f.StringVar(&opts.apiKeyFile, "api-key-file", "", "read the API key from `FILE` (default $ANTHROPIC_API_KEY)")
	f.StringVar(&opts.agent, "agent", "memvault-chat", "`NAME` of the agent, recorded in each commit")
	f.StringVar(&opts.session, "session", "", "session `ID` recorded in each commit (default chat-<time>)")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "do not show memory commands on stderr")
	opts.face.add(c)
	return c
}

func runChat(ctx context.Context, c *cobra.Command, g *globalOptions, opts chatOptions, in io.Reader, out, errOut io.Writer) (err error) {
	if opts.maxTokens < 1 {
		return &usageError{cmd: c.CommandPath(), err: errors.New("--max-tokens must be positive")}
	}
	clientOpts, err := apiKeyOptions(opts)
	if err != nil {
		return err
	}
	prompt := opts.prompt
	if prompt == "-" {
		b, err := io.ReadAll(io.LimitReader(in, 1<<20))
		if err != nil {
			return fmt.Errorf("chat: read the prompt: %w", err)
		}
		if prompt = strings.TrimSpace(string(b)); prompt == "" {
			return &usageError{cmd: c.CommandPath(), err: errors.New("-p -: the prompt on stdin is empty")}
		}
	}
	v, err := g.openFace(ctx, errOut, g.passphrase)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	session := opts.session
	if session == "" {
		session = "chat-" + time.Now().UTC().Format("20060102T150405Z")
	}
	copts := claude.ChatOptions{
		Model:     firstNonEmpty(opts.model, os.Getenv("ANTHROPIC_MODEL")),
		MaxTokens: opts.maxTokens,
		System:    opts.system,
		ContextEdits: claude.ContextEdits{
			NoContextEditing: opts.noContextEditing || opts.noContextManagement,
			NoCompaction:     opts.noCompaction || opts.noContextManagement,
		},
	}
	if !opts.quiet {
		st := stylesFor(errOut)
		copts.OnToolCall = func(tc claude.ToolCall) { fmt.Fprintln(errOut, st.dim(describeCall(tc))) }
		copts.OnContextEdit = func(e claude.ContextEdit) { fmt.Fprintln(errOut, st.dim(describeEdit(e))) }
	}
	h := agent.New(agent.Vault(opts.face.store(v)), agent.Options{Agent: opts.agent, Session: session, ReadOnly: opts.face.readOnly})
	chat := claude.NewChat(anthropic.NewClient(clientOpts...), h, copts)
	if c.Flags().Changed("print") {
		reply, err := chat.Send(ctx, prompt)
		if err != nil {
			return err
		}
		if isTerminal(out) {
			reply = escape.Text(reply) // the model may repeat what a memory file holds
		}
		_, err = fmt.Fprintln(out, reply)
		return err
	}
	return repl(ctx, chat, in, out, errOut)
}

// apiKeyOptions finds the API key: --api-key-file, else what the SDK reads
// from the environment. It fails early, and clearly, when there is none.
func apiKeyOptions(opts chatOptions) ([]option.RequestOption, error) {
	if opts.apiKeyFile != "" {
		b, err := os.ReadFile(opts.apiKeyFile)
		if err != nil {
			return nil, fmt.Errorf("chat: api key: %w", err)
		}
		key := strings.TrimSpace(string(b))
		if key == "" {
			return nil, fmt.Errorf("chat: api key file %s is empty", opts.apiKeyFile)
		}
		return []option.RequestOption{option.WithAPIKey(key)}, nil
	}
	if os.Getenv("ANTHROPIC_API_KEY") == "" && os.Getenv("ANTHROPIC_AUTH_TOKEN") == "" {
		return nil, errors.New("chat: no API key: set ANTHROPIC_API_KEY or pass --api-key-file")
	}
	return nil, nil
}

// describeCall is the line shown for a tool call: its command and path(s), and
// for an error answer its first line, cut short. Control characters the model
// put there are masked, so they cannot drive the terminal.
func describeCall(tc claude.ToolCall) string {
	var in struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		OldPath string `json:"old_path"`
		NewPath string `json:"new_path"`
	}
	_ = json.Unmarshal(tc.Input, &in)
	s := tc.Name + ": " + in.Command + " " + in.Path
	if in.OldPath != "" || in.NewPath != "" {
		s += in.OldPath + " -> " + in.NewPath
	}
	if tc.Answer.IsError {
		first, _, _ := strings.Cut(tc.Answer.Content, "\n")
		if r := []rune(first); len(r) > 120 {
			first = string(r[:120]) + "…"
		}
		s += " (" + first + ")"
	}
	return "  " + escape.Line(s)
}

// describeEdit is the line shown when the API changed the context: a person
// sees the session compacted or old tool results cleared, which explains a
// model that has to view its memory again.
func describeEdit(e claude.ContextEdit) string {
	switch e.Type {
	case "compaction":
		return "  context: compacted (the conversation so far is summarized)"
	case "clear_tool_uses_20250919":
		return fmt.Sprintf("  context: cleared %d old tool results (%d tokens)", e.ClearedToolUses, e.ClearedInputTokens)
	}
	return "  context: " + escape.Line(e.Type)
}
