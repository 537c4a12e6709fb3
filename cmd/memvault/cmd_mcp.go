package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
)

// envMCPToken holds the bearer token of `memvault mcp --http`, so that it is
// not on the command line for every process listing to show.
const envMCPToken = "MEMVAULT_MCP_TOKEN"

// mcpOptions are the flags of `memvault mcp`.
type mcpOptions struct {
	http        string // --http ADDR; "" serves stdio
	allowRemote bool
	tokenFile   string
	noAuth      bool
	syncEvery   time.Duration // --sync-every; 0: no syncing
	face        faceFlags
}

func newMCPCommand(g *globalOptions) *cobra.Command {
	var opts mcpOptions
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the vault to MCP clients such as Claude Code and Claude Desktop",
		Long: `Mcp serves the vault over the Model Context Protocol, on stdin and stdout by default,
so an MCP client (Claude Code, Claude Desktop, any other) can start it as a server.

It offers four tools. "memory" takes the memory tool's command object and answers as
'memvault tool' does; its description teaches the model the memory protocol (view
/memories first, record progress, assume interruption). "history" lists recent
commits. "search" finds a regular expression in the current memory (path:line: text).
"blame" says which commit, agent and session wrote each line of a file, optionally at
an earlier revision. Every memory file is also a read-only resource
memory:///memories/..., and clients hear when the list or a subscribed file changes.
Commits made through MCP name the client (Agent) and a session id of their own, also for
clients of the 2026-07-28 revision, which has no sessions, and the model's tool_use id
(Tool-Use-Id) when the client sends it in the request's _meta (Claude Code does, as
claudecode/toolUseId; any client may send memvault/toolUseId). Every revision is served, on
stdio and HTTP alike, and a client's requests run in the order they arrived.
A vault that does not exist yet is created on first use. When the vault or the identity
cannot be read, mcp says why on stderr and still serves: the tools are listed, and every
call answers with the reason and the fix as an error, for clients that hide stderr.

With --http ADDR it serves MCP's streamable HTTP transport instead, at
http://ADDR/mcp (give clients that URL: some take one without /mcp for the older
SSE transport). An ADDR without a host (":8765") listens on 127.0.0.1.
Every request must carry a bearer token, "Authorization: Bearer <token>", on loopback
too, where every account on the machine can connect: the token is read from --token-file,
else $` + envMCPToken + `, else $XDG_CONFIG_HOME/memvault/mcp-token, which is made (readable
by you only) the first time. --no-auth serves without one, and says so on stderr.
An address that is not loopback is refused unless --allow-remote is given as well as
--token-file or $` + envMCPToken + `. Put a TLS proxy in front of a remote server.

` + reviewHelp + ` A read-only server marks its memory tool so to clients.`,
		Example: `  claude mcp add memvault -- memvault mcp
  memvault mcp --http 127.0.0.1:8765
  claude mcp add --transport http memvault http://127.0.0.1:8765/mcp \
    --header "Authorization: Bearer $(cat ~/.config/memvault/mcp-token)"
  ` + envMCPToken + `=$(cat token) memvault mcp --http 0.0.0.0:8765 --allow-remote`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runMCP(c.Context(), c, g, opts, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&opts.http, "http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	c.Flags().BoolVar(&opts.allowRemote, "allow-remote", false, "with --http, allow an address that is not loopback (needs a token)")
	c.Flags().StringVar(&opts.tokenFile, "token-file", "", "read the bearer token for --http from `FILE` (default $"+envMCPToken+", else $XDG_CONFIG_HOME/memvault/mcp-token)")
	c.Flags().BoolVar(&opts.noAuth, "no-auth", false, "with --http, serve without a token: every local user can then read and write the vault")
	c.Flags().DurationVar(&opts.syncEvery, "sync-every", 0, syncEveryUsage)
	opts.face.add(c)
	return c
}

func runMCP(ctx context.Context, c *cobra.Command, g *globalOptions, opts mcpOptions, in io.Reader, out, errOut io.Writer) (err error) {
	if opts.http == "" && (opts.allowRemote || opts.tokenFile != "" || opts.noAuth) {
		return &usageError{cmd: c.CommandPath(), err: errors.New("--allow-remote, --token-file and --no-auth go with --http")}
	}
	if opts.noAuth && (opts.allowRemote || opts.tokenFile != "") {
		return &usageError{cmd: c.CommandPath(), err: errors.New("--no-auth goes with neither --allow-remote nor --token-file")}
	}
	var hopts mcpserver.HTTPOptions
	var tokenNote string
	var ln net.Listener
	if opts.http != "" {
		if ln, hopts, tokenNote, err = listenMCP(ctx, c, opts); err != nil {
			return err
		}
		defer ln.Close()
	}
	v, down, err := g.openServer(ctx, errOut, "memvault mcp")
	if err != nil {
		return err
	}
	var srv *mcp.Server
	maxLine := vault.DefaultLimits.MaxRequestLine // a server that could not start reads no limits
	if down != "" {
		srv = mcpserver.NewUnavailable(down, mcpserver.Options{Version: buildVersion()})
		defer func() {
			if err == nil {
				err = errReported
			}
		}()
	} else {
		defer closeVault(v, &err)
		v.IndexHistory() // a long-lived process: its first per-file history answers at once
		defer startAutoSync(ctx, v, opts.syncEvery, errOut)()
		store := opts.face.store(v)
		opts.face.say(store, errOut)
		ms := mcpserver.New(store, mcpserver.Options{Version: buildVersion(), ReadOnly: opts.face.readOnly})
		defer ms.Close() // before the vault closes: its polling reads the vault
		srv = ms.Server
		maxLine = v.Limits().MaxRequestLine
	}
	if opts.http == "" {
		return mcpserver.ServeStdio(ctx, srv, in, out, maxLine)
	}
	hopts.MaxBody = int64(maxLine)
	url := fmt.Sprintf("http://%s%s", ln.Addr(), mcpserver.Path)
	fmt.Fprintf(errOut, "memvault: serving MCP (streamable HTTP) at %s\n", url)
	if hopts.NoAuth {
		fmt.Fprintf(errOut, "memvault: warning: --no-auth: every user of this machine who can reach %s reads and writes this vault\n", url)
	} else {
		fmt.Fprintf(errOut, "memvault: clients send \"Authorization: Bearer <token>\", %s\n", strings.ReplaceAll(tokenNote, "URL", url))
	}
	return mcpserver.ServeHTTP(ctx, srv, ln, hopts)
}

// listenMCP binds the address of --http and finds the server's token. The
// address is checked, and bound, before anything is made: a token file for
// an address the server would refuse is one nobody needs.
func listenMCP(ctx context.Context, c *cobra.Command, opts mcpOptions) (ln net.Listener, hopts mcpserver.HTTPOptions, note string, err error) {
	if hopts, note, err = httpOptions(c, opts); err != nil {
		return nil, hopts, "", err
	}
	ln, err = mcpserver.Listen(ctx, opts.http, hopts)
	if errors.Is(err, mcpserver.ErrNotLoopback) {
		return nil, hopts, "", &usageError{cmd: c.CommandPath(), err: fmt.Errorf("--http %s: %w; to serve other hosts, "+
			"pass --allow-remote with a bearer token in $%s or --token-file", opts.http, err, envMCPToken)}
	}
	if err != nil {
		return nil, hopts, "", err
	}
	if !hopts.NoAuth && hopts.Token == "" {
		if hopts.Token, note, err = defaultToken(); err != nil {
			ln.Close()
			return nil, hopts, "", err
		}
	}
	return ln, hopts, note, nil
}

// httpOptions finds a token the user chose (--token-file, the environment;
// see the command's help) and checks that --allow-remote has one. note tells
// where the token is, for stderr. With neither, h.Token is empty: the server
// listens on loopback only, and defaultToken gives it one.
func httpOptions(c *cobra.Command, opts mcpOptions) (h mcpserver.HTTPOptions, note string, err error) {
	h = mcpserver.HTTPOptions{AllowRemote: opts.allowRemote, NoAuth: opts.noAuth}
	switch {
	case opts.noAuth:
	case opts.tokenFile != "":
		b, err := os.ReadFile(opts.tokenFile)
		if err != nil {
			return h, "", fmt.Errorf("mcp: token: %w", err)
		}
		if h.Token = strings.TrimSpace(string(b)); h.Token == "" {
			return h, "", fmt.Errorf("mcp: token file %s is empty", opts.tokenFile)
		}
		note = "the token in " + opts.tokenFile
	case os.Getenv(envMCPToken) != "":
		h.Token, note = os.Getenv(envMCPToken), "the token in $"+envMCPToken
	case h.AllowRemote:
		return h, "", &usageError{cmd: c.CommandPath(), err: fmt.Errorf(
			"--allow-remote needs a bearer token: set $%s or pass --token-file", envMCPToken)}
	}
	return h, note, nil
}

// defaultToken is the token of a loopback server whose user named none: the
// one in $XDG_CONFIG_HOME/memvault/mcp-token, made when missing. note tells
// where it is and how a client uses it; "URL" in it stands for the server's URL.
func defaultToken() (token, note string, err error) {
	path, err := mcpTokenFile()
	if err != nil {
		return "", "", err
	}
	token, created, err := loadOrCreateToken(path)
	if err != nil {
		return "", "", err
	}
	note = "the token in " + path
	if created {
		note += " (made now, readable by you only)"
	}
	note += fmt.Sprintf(":\n  claude mcp add --transport http memvault URL --header \"Authorization: Bearer $(cat %s)\"", shellQuote(path))
	return token, note, nil
}
