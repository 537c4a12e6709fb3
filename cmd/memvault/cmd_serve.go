package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent"
)

// serveOptions are the flags of `memvault serve`.
type serveOptions struct {
	agent     string
	session   string
	syncEvery time.Duration // --sync-every; 0: no syncing
	face      faceFlags
}

func newServeCommand(g *globalOptions) *cobra.Command {
	var opts serveOptions
	c := &cobra.Command{
		Use:   "serve",
		Short: "Answer memory tool calls as JSON lines on stdin and stdout",
		Long: `Serve answers memory tool calls for a long-lived bridge, such as a memory backend
of the Anthropic Python or TypeScript SDK that keeps one memvault process.

Each line on stdin is one request, and each gets one line on stdout, in order:

  {"id": <any JSON>, "input": {<tool input>}, "tool_use_id": "toolu_..."}
  {"id": <the same>, "content": "<answer>", "is_error": false}

tool_use_id is optional. A malformed line gets an error line, never a crash. Serve ends
cleanly at the end of stdin.

A vault that does not exist yet is created on first use. When the vault or the identity
cannot be read, serve says why on stderr and answers every line with the reason and the
fix as an error line, for bridges that never show stderr; it then exits with status 2.

` + reviewHelp,
		Example: `  printf '%s\n' '{"id":1,"input":{"command":"view","path":"/memories"}}' | memvault serve
  memvault serve --agent support-bot --session 2025-06-01`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runServe(c.Context(), g, opts, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&opts.agent, "agent", "", "`NAME` of the agent, recorded in each commit")
	c.Flags().StringVar(&opts.session, "session", "", "session or conversation `ID`, recorded in each commit")
	c.Flags().DurationVar(&opts.syncEvery, "sync-every", 0, syncEveryUsage)
	opts.face.add(c)
	return c
}

func runServe(ctx context.Context, g *globalOptions, opts serveOptions, in io.Reader, out, errOut io.Writer) (err error) {
	v, down, err := g.openServer(ctx, errOut, "memvault serve")
	if err != nil {
		return err
	}
	if down != "" {
		if err := agent.ServeUnavailable(ctx, down, in, out); err != nil {
			return err
		}
		return errReported
	}
	defer closeVault(v, &err)
	v.IndexHistory() // a long-lived process: its first per-file history answers at once
	defer startAutoSync(ctx, v, opts.syncEvery, errOut)()
	store := opts.face.store(v)
	opts.face.say(store, errOut)
	h := agent.New(agent.Vault(store), agent.Options{Agent: opts.agent, Session: opts.session, ReadOnly: opts.face.readOnly})
	return agent.Serve(ctx, h, in, out)
}
