package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
)

// maxToolInput bounds what `memvault tool` reads from stdin: the same bound as a
// request line of `memvault serve`.
const maxToolInput = agent.DefaultMaxLine

// toolOptions are the flags of `memvault tool`.
type toolOptions struct {
	toolUseID string
	agent     string
	session   string
	face      faceFlags
}

func newToolCommand(g *globalOptions) *cobra.Command {
	var opts toolOptions
	c := &cobra.Command{
		Use:   "tool",
		Short: "Answer one memory tool call: input JSON on stdin, answer on stdout",
		Long: `Tool runs one command of Claude's memory tool (memory_20250818) on the vault.

It reads one tool input, the JSON object of a tool_use block's "input", from stdin, and
writes the answer's content to stdout exactly as the tool_result content should be:
no newline is added and nothing else is printed. The exit status is the is_error flag:

  0  the command succeeded
  1  the answer is an error for the model (is_error: true), e.g. a missing file
  2  memvault itself could not run: a usage or setup error, explained on stderr

Each successful create, str_replace, insert, delete or rename is one commit; --tool-use-id,
--agent and --session go into its trailers so the history can name the call.

` + reviewHelp,
		Example: `  echo '{"command":"view","path":"/memories"}' | memvault tool
  printf '%s' '{"command":"create","path":"/memories/notes.md","file_text":"hello\n"}' |
    memvault tool --tool-use-id toolu_01A --agent my-agent`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runTool(c.Context(), g, opts, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&opts.toolUseID, "tool-use-id", "", "the tool_use block's `ID`, recorded in the commit")
	c.Flags().StringVar(&opts.agent, "agent", "", "`NAME` of the agent, recorded in the commit")
	c.Flags().StringVar(&opts.session, "session", "", "session or conversation `ID`, recorded in the commit")
	opts.face.add(c)
	return c
}

func runTool(ctx context.Context, g *globalOptions, opts toolOptions, in io.Reader, out, errOut io.Writer) (err error) {
	input, err := io.ReadAll(io.LimitReader(in, maxToolInput+1))
	if err != nil {
		return fmt.Errorf("tool: read stdin: %w", err)
	}
	if len(input) > maxToolInput {
		return fmt.Errorf("tool: input over %d MiB", maxToolInput>>20)
	}
	v, err := g.openFace(ctx, errOut, g.passphrase)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	h := agent.New(agent.Vault(opts.face.store(v)), agent.Options{Agent: opts.agent, Session: opts.session, ReadOnly: opts.face.readOnly})
	ans, err := h.Run(ctx, input, opts.toolUseID)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(out, ans.Content); err != nil {
		return fmt.Errorf("tool: write answer: %w", err)
	}
	if ans.IsError {
		return errErrorAnswer
	}
	return nil
}
