package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewUnavailable returns an MCP server for a program that could not open its
// vault (a damaged vault, an identity that cannot be read). It offers the same
// tools as New, so a client lists them as usual, and answers every
// call with reason as an error result (isError): a client that never shows the
// server's stderr, and the model behind it, still learn why memory does not
// work and what to do. reason is the whole answer, the fix included. It offers
// no resources.
func NewUnavailable(reason string, opts Options) *mcp.Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "memvault", Title: "memvault", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "memvault is your persistent memory, through the memory tool, but it could not start:\n\n" + reason,
		Logger:       opts.Logger,
		SetCacheable: privateCache,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	fail := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult(reason, true), nil
	}
	srv.AddTool(memoryTool(false), fail)
	srv.AddTool(historyTool(), fail)
	srv.AddTool(searchTool(), fail)
	srv.AddTool(blameTool(), fail)
	return srv
}
